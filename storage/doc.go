// Package storage defines the contract every Weft storage backend
// implements, in two halves (halves.go): TraceData, the Weave trace API's
// data (the call records that flow through the pipeline, the writer that
// makes them durable, the readers the query API uses, and the stores of
// objects, tables, files, feedback, costs and annotation queues), and
// ControlPlane, the state of Weft's own services (automations, training,
// monitors, the gateway's limits). Backends live in sub-packages (duckdb,
// clickhouse) and pass both conformance suites in storage/conformance
// (RunTraceData, RunControlPlane).
//
// Its types are storage shapes, not HTTP ones: they carry no JSON tags;
// package wire holds the JSON forms and the query API translates.
//
// This package must never import a backend, a receiver, the query API or
// wire (internal/importrules enforces it).
package storage
