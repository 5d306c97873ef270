// Package clickhouse is the scale-out storage backend: calls, threads and
// API keys (and, in sibling files, the other record kinds) in ClickHouse,
// shared by every weft role of a deployment. It implements the storage
// contract, passes the conformance suite, and renders queries with
// sqlgen's ClickHouse dialect.
//
// Calls are versioned rows of a ReplacingMergeTree read with FINAL: the
// writer merges each call's parts with its stored row in Go and inserts one
// new version per touched call (docs/adr/0007-clickhouse-schema.md).
// Read-merge-insert is serialised per project inside a process; across
// processes it relies on one writer per project at a time, which the
// pipeline gives by keying Kafka records by project.
//
// The schema lives in migrations/*.sql, embedded and applied in name order
// by (*Store).Migrate.
//
// It must never import the receiver, the pipeline, the query API or
// another backend; test infrastructure (internal/chfront) only in tests.
package clickhouse
