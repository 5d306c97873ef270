// Package storage defines the contract every Weft storage backend implements:
// the call records that flow through the pipeline, the writer that makes them
// durable, and the reader the query API uses. Backends live in sub-packages
// (duckdb, clickhouse) and all pass the conformance suite in
// storage/conformance.
//
// This package must never import a backend, a receiver or the query API.
package storage
