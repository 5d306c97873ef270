// Package conformance is the storage contract's test suite: the same cases
// run against every backend (DuckDB, ClickHouse) so they answer every query
// the same way, one suite per half of the contract: RunTraceData and
// RunControlPlane. A backend's tests call each once with a constructor for
// a fresh, empty store; the suites do the rest through the storage
// interfaces only.
//
// It must never import a backend.
package conformance
