package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage/sqlgen"
)

// migrateCalls applies the calls table's DDL in the calls catalog. A store
// written by a version that kept calls in the main file has them moved
// first, in one transaction made durable by a checkpoint of the calls file
// before the old table is dropped: a crash at any point leaves the calls
// in one file or the other, and the next open finishes the move.
func (s *Store) migrateCalls(ctx context.Context, ddl []string) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	legacy, err := tableExists(ctx, conn, catalog, "calls")
	if err != nil {
		return err
	}
	moved, err := tableExists(ctx, conn, callsCatalog, "calls")
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "USE "+callsCatalog); err != nil {
		return err
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "USE "+catalog)
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), searchPathSQL)
	}()
	if legacy && !moved {
		if err := s.moveCalls(ctx, conn, ddl); err != nil {
			return err
		}
		if err := s.storedLatency(ctx, conn); err != nil {
			return err
		}
		if err := s.storedTokens(ctx, conn); err != nil {
			return err
		}
		return backfillMinutes(ctx, conn)
	}
	for _, body := range ddl {
		if _, err := conn.ExecContext(ctx, body); err != nil {
			return fmt.Errorf("calls table: %w", err)
		}
	}
	if err := s.refsAsText(ctx, conn); err != nil {
		return err
	}
	if err := s.storedLatency(ctx, conn); err != nil {
		return err
	}
	if err := s.storedTokens(ctx, conn); err != nil {
		return err
	}
	if err := backfillMinutes(ctx, conn); err != nil {
		return err
	}
	if legacy {
		return dropLegacyCalls(ctx, conn)
	}
	return nil
}

// latencyMissing finds a call that has a start and an end but no stored
// latency: one written before migrations/0012_calls_latency.sql. The
// writer sets the column whenever both are known, so on a converted table
// the scan reads only the column's validity.
const latencyMissing = "SELECT EXISTS (SELECT 1 FROM calls WHERE latency_ms IS NULL AND started_at IS NOT NULL AND ended_at IS NOT NULL)"

// storedLatency fills latency_ms for calls written before the column was,
// once, by rewriting the column (ALTER ... USING), not by an UPDATE: on
// 3M calls 0.4 s against 37 s, without an undo entry per row. A crash
// before its checkpoint leaves the rows to fill at the next open.
func (s *Store) storedLatency(ctx context.Context, conn *sql.Conn) error {
	var missing bool
	if err := conn.QueryRowContext(ctx, latencyMissing).Scan(&missing); err != nil {
		return fmt.Errorf("calls table: stored latency: %w", err)
	}
	if !missing {
		return nil
	}
	begin := time.Now()
	s.logger.Info("storing each call's latency with it (once per data dir)")
	for _, stmt := range []string{
		"ALTER TABLE calls ALTER COLUMN latency_ms SET DATA TYPE BIGINT USING coalesce(latency_ms, epoch_ms(ended_at) - epoch_ms(started_at))",
		"FORCE CHECKPOINT " + callsCatalog,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("calls table: stored latency: %w", err)
		}
	}
	s.logger.Info("stored each call's latency with it", "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// storedTokens fills total_tokens for calls written before the column
// was (migrations/0014_calls_tokens.sql), once: the rows with typed usage
// by rewriting the column (ALTER ... USING, fast, but its binder takes no
// lambdas), the rest with the readers' whole expression
// (sqlgen.TotalTokensSQL) by UPDATEs of tokensFillRows row ids each, so
// that no transaction holds the undo of a whole table. It is noted done
// at the end: unlike a latency, a total can stay NULL, so the rows left
// NULL cannot tell whether it ran, and a restart part way starts over.
func (s *Store) storedTokens(ctx context.Context, conn *sql.Conn) error {
	var filled bool
	err := conn.QueryRowContext(ctx, "SELECT count(*) > 0 FROM calls_columns_filled WHERE column_name = 'total_tokens'").Scan(&filled)
	if err != nil || filled {
		return err
	}
	begin := time.Now()
	var rows int64
	if err := conn.QueryRowContext(ctx, "SELECT coalesce(max(rowid) + 1, 0) FROM calls").Scan(&rows); err != nil {
		return fmt.Errorf("calls table: stored token totals: %w", err)
	}
	typed := sqlgen.TypedTokensSQL(sqlgen.DuckDB{}, "")
	if _, err := conn.ExecContext(ctx, "ALTER TABLE calls ALTER COLUMN total_tokens SET DATA TYPE DOUBLE USING coalesce(total_tokens, "+typed+")"); err != nil {
		return fmt.Errorf("calls table: stored token totals: %w", err)
	}
	parse := "UPDATE calls SET total_tokens = " + sqlgen.TotalTokensSQL(sqlgen.DuckDB{}, "calls") +
		" WHERE rowid >= ? AND rowid < ? AND total_tokens IS NULL AND has_end AND (usage_models IS NULL OR usage_models > 1)"
	for from := int64(0); from < rows; from += tokensFillRows {
		if _, err := conn.ExecContext(ctx, parse, from, from+tokensFillRows); err != nil {
			return fmt.Errorf("calls table: stored token totals: %w", err)
		}
	}
	for _, stmt := range []string{"INSERT INTO calls_columns_filled VALUES ('total_tokens')", "FORCE CHECKPOINT " + callsCatalog} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("calls table: stored token totals: %w", err)
		}
	}
	if rows > 0 {
		s.logger.Info("stored each call's token total with it (once per data dir)", "calls", rows, "took", time.Since(begin).Round(time.Millisecond))
	}
	return nil
}

// tokensFillRows is how many rows one UPDATE of storedTokens spans.
const tokensFillRows = 100_000

func (s *Store) moveCalls(ctx context.Context, conn *sql.Conn, ddl []string) error {
	begin := time.Now()
	s.logger.Info("moving calls into their own database file (once per data dir)", "file", CallsFileName)
	stmts := append([]string{"BEGIN TRANSACTION"}, ddl...)
	stmts = append(stmts,
		fmt.Sprintf("INSERT INTO %s.main.calls BY NAME SELECT * REPLACE (%s AS input_refs, %s AS output_refs) FROM %s.main.calls",
			callsCatalog, refsListAsText("input_refs"), refsListAsText("output_refs"), catalog),
		"COMMIT", "FORCE CHECKPOINT "+callsCatalog)
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return fmt.Errorf("move calls into %s: %w", CallsFileName, err)
		}
	}
	if err := dropLegacyCalls(ctx, conn); err != nil {
		return err
	}
	s.logger.Info("moved calls into their own database file", "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// refsAsText converts the refs columns of a calls table made when they
// were lists into the JSON text they are kept as now (migrations/
// 0001_calls.sql), once: rewriting two columns of every call, a few
// seconds per million calls.
func (s *Store) refsAsText(ctx context.Context, conn *sql.Conn) error {
	var typ string
	err := conn.QueryRowContext(ctx, "SELECT data_type FROM duckdb_columns() WHERE database_name = ? AND schema_name = 'main' "+
		"AND table_name = 'calls' AND column_name = 'input_refs'", callsCatalog).Scan(&typ)
	if err != nil {
		return fmt.Errorf("calls table: refs column type: %w", err)
	}
	if typ == "VARCHAR" {
		return nil
	}
	begin := time.Now()
	s.logger.Info("converting the calls table's refs to text (once per data dir)")
	stmts := []string{"BEGIN TRANSACTION"}
	for _, col := range []string{"input_refs", "output_refs"} {
		stmts = append(stmts, fmt.Sprintf("ALTER TABLE calls ALTER COLUMN %s SET DATA TYPE VARCHAR USING %s", col, refsListAsText(col)))
	}
	stmts = append(stmts, "COMMIT", "FORCE CHECKPOINT "+callsCatalog)
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return fmt.Errorf("calls table: refs as text: %w", err)
		}
	}
	s.logger.Info("converted the calls table's refs to text", "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// refsListAsText renders a refs list column as the JSON text refsText
// writes.
func refsListAsText(col string) string {
	return fmt.Sprintf("(CASE WHEN len(%s) > 0 THEN CAST(to_json(%s) AS VARCHAR) END)", col, col)
}

func dropLegacyCalls(ctx context.Context, conn *sql.Conn) error {
	for _, stmt := range []string{fmt.Sprintf("DROP TABLE %s.main.calls", catalog), "FORCE CHECKPOINT " + catalog} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("drop the moved calls table: %w", err)
		}
	}
	return nil
}

func tableExists(ctx context.Context, conn *sql.Conn, database, table string) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx,
		"SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' AND table_name = ?",
		database, table).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for table %s.%s: %w", database, table, err)
	}
	return n > 0, nil
}

// CheckpointCalls makes every call write committed so far durable: with
// Options.CallsUnlogged they are in memory until a checkpoint writes them
// to the calls file; otherwise they already are, and it does nothing. It
// waits for the reads of calls running, stopping paged reads that run on
// past checkpointPatience.
func (s *Store) CheckpointCalls(ctx context.Context) error {
	if !s.callsUnlogged {
		return nil
	}
	return s.calls.checkpoint(func() error { return s.forceCheckpoint(ctx) })
}

// TryCheckpointCalls is CheckpointCalls unless a paged read of calls is
// running: then it returns false at once, and the caller tries later.
func (s *Store) TryCheckpointCalls(ctx context.Context) (bool, error) {
	if !s.callsUnlogged {
		return true, nil
	}
	return s.calls.tryCheckpoint(func() error { return s.forceCheckpoint(ctx) })
}

// forceCheckpoint checkpoints the calls file; the guard is held, so no
// read of calls runs. The write lock is taken after the guard, so writes
// go on while the checkpoint waits for reads.
func (s *Store) forceCheckpoint(ctx context.Context) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.calls.err(); err != nil { // a commit failed while this waited
		return err
	}
	if _, err := s.db.ExecContext(ctx, "FORCE CHECKPOINT "+callsCatalog); err != nil {
		return fmt.Errorf("checkpoint calls: %w", err)
	}
	return nil
}

// CallsNeedCheckpoint reports whether call writes wait for CheckpointCalls
// to be durable.
func (s *Store) CallsNeedCheckpoint() bool { return s.callsUnlogged }
