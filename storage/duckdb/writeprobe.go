package duckdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftdev/weft/storage"
)

// probeInsert writes a row into the calls table, in a transaction that is
// rolled back: the smallest write the calls file takes.
const probeInsert = "INSERT INTO " + callsCatalog + ".main.calls (project_id, id) VALUES ('', '')"

// ProbeWrites reports whether the store takes writes at all, with a write
// that involves no caller's record: a one-row insert into the calls
// table, rolled back, and a read of a row of each database file (a
// statement that touches no table, SELECT 1, succeeds even on a database
// DuckDB has invalidated). The storage exporter asks it when a write
// fails, to tell a store that takes no writes (tried again for as long as
// that lasts) from a record the store refuses, such as one whose merge
// needs more memory than DuckDB's limit lets it have (set aside after a
// few attempts).
func (s *Store) ProbeWrites(ctx context.Context) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("duckdb conn: %w: %w", storage.ErrUnavailable, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("probe write: begin: %w", err)
	}
	_, err = conn.ExecContext(ctx, probeInsert)
	if err == nil {
		_, err = conn.ExecContext(ctx, watchProbe)
	}
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
	}
	if err != nil {
		return fmt.Errorf("probe write: %w", err)
	}
	return nil
}
