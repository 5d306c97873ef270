// Package chfront serves the embedded ClickHouse engine (package chdb) over
// the ClickHouse HTTP interface, so tests and the local dev stack can drive a
// real ClickHouse with github.com/ClickHouse/clickhouse-go/v2 using
// Protocol: clickhouse.HTTP, or with curl.
//
// It owns the HTTP side: query text from the query parameter and the body,
// settings and param_* parameters, INSERT data (spooled to a file the engine
// reads with FROM INFILE), HTTP and ClickHouse block compression, and errors
// in ClickHouse's form. The engine answers Native at revision 0; the
// handshake query of clickhouse-go (pinned to v2.50.0) is rewritten so the
// client expects exactly that.
//
// Not supported: sessions (session_id), external tables, progress headers.
//
// It is test and development infrastructure: it must never import weft
// packages other than internal/chdb, and production code must never import it.
package chfront
