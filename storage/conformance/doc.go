// Package conformance is the storage contract's test suite: the same cases
// run against every backend (DuckDB, ClickHouse) so they answer every query
// the same way. A backend's test calls RunAll once with a constructor for a
// fresh, empty store; the suite does the rest through the storage
// interfaces only.
//
// It must never import a backend.
package conformance
