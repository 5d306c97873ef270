// Package duckdb is the embedded storage backend: one DuckDB database file
// in the data directory holds calls, objects, tables, files, feedback and
// prices. It implements the storage contract and must pass the conformance
// suite.
//
// Writes are serialised through one connection (DuckDB has one writer);
// reads use a pool and see committed data only.
package duckdb
