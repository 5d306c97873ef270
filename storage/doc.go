// Package storage defines the contract every Weft storage backend implements:
// the call records that flow through the pipeline, the writer that makes them
// durable, the readers the query API uses, and the stores of objects,
// tables, files, feedback and prices. Backends live in sub-packages
// (duckdb, clickhouse) and all pass the conformance suite in
// storage/conformance (conformance.RunAll).
//
// Its types are storage shapes, not HTTP ones: they carry no JSON tags;
// package wire holds the JSON forms and the query API translates.
//
// This package must never import a backend, a receiver, the query API or
// wire (internal/importrules enforces it).
package storage
