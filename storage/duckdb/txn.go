package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
)

// rollback ends whatever transaction a failed or stopped statement left
// open on conn, before conn goes back to the pool. A stopped COMMIT (its
// context canceled by a client going away or a shutdown) runs nothing, so
// the transaction stays open, aborted or not; handed on like that, the
// connection fails every later statement and holds DuckDB's checkpoint
// lock, so the next FORCE CHECKPOINT waits for ever. A connection that
// cannot roll back is dropped from the pool instead.
func rollback(conn *sql.Conn) {
	_, err := conn.ExecContext(context.Background(), "ROLLBACK")
	if err == nil || strings.Contains(err.Error(), "no transaction is active") {
		return
	}
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}
