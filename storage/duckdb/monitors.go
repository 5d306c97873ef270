package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
)

// monitorChunk bounds the call ids of one read.
const monitorChunk = 200

// EnqueueMonitorCalls implements storage.MonitorStore.
func (s *Store) EnqueueMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error {
	return s.writeMonitorCalls(ctx, calls, ` ON CONFLICT (project_id, call_id) DO NOTHING`)
}

// DeferMonitorCalls implements storage.MonitorStore.
func (s *Store) DeferMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error {
	return s.writeMonitorCalls(ctx, calls, ` ON CONFLICT (project_id, call_id) DO UPDATE SET attempts = excluded.attempts, next_at = excluded.next_at`)
}

func (s *Store) writeMonitorCalls(ctx context.Context, calls []storage.MonitorCall, conflict string) error {
	if len(calls) == 0 {
		return nil
	}
	rows := make([][]any, len(calls))
	for i, c := range calls {
		rows[i] = []any{c.ProjectID, c.CallID, c.QueuedAt.UTC(), c.Attempts, c.NextAt.UTC()}
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		err := insertValues(ctx, tx, `INSERT INTO monitor_calls (project_id, call_id, queued_at, attempts, next_at)`, conflict, rows)
		if err != nil {
			return fmt.Errorf("queue calls for monitors: %w", err)
		}
		return nil
	})
}

// PendingMonitorCalls implements storage.MonitorStore.
func (s *Store) PendingMonitorCalls(ctx context.Context, now time.Time, limit int) ([]storage.MonitorCall, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project_id, call_id, queued_at, attempts, next_at FROM monitor_calls
		WHERE next_at <= ? ORDER BY queued_at, project_id, call_id LIMIT ?`, now.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("read monitor queue: %w", err)
	}
	return collectRows(rows, "read monitor queue", func(rows *sql.Rows) (storage.MonitorCall, error) {
		var c storage.MonitorCall
		err := rows.Scan(&c.ProjectID, &c.CallID, &c.QueuedAt, &c.Attempts, &c.NextAt)
		c.QueuedAt, c.NextAt = c.QueuedAt.UTC(), c.NextAt.UTC()
		return c, err
	})
}

// RemoveMonitorCalls implements storage.MonitorStore.
func (s *Store) RemoveMonitorCalls(ctx context.Context, calls []storage.MonitorCall) error {
	if len(calls) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(calls, monitorChunk) {
			args := make([]any, 0, 2*len(chunk))
			for _, c := range chunk {
				args = append(args, c.ProjectID, c.CallID)
			}
			q := `DELETE FROM monitor_calls WHERE (project_id, call_id) IN (` + rowsOf("(?, ?)", len(chunk)) + `)`
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("remove calls from the monitor queue: %w", err)
			}
		}
		return nil
	})
}

const monitorResultColumns = "project_id, call_id, scorer_ref, monitor, monitor_ref, status, message, cost_usd, scored_at"

// RecordMonitorResults implements storage.MonitorStore.
func (s *Store) RecordMonitorResults(ctx context.Context, results []storage.MonitorResult) error {
	if len(results) == 0 {
		return nil
	}
	rows := make([][]any, len(results))
	for i, r := range results {
		rows[i] = []any{r.ProjectID, r.CallID, r.ScorerRef, r.Monitor, r.MonitorRef, r.Status, r.Message, r.CostUSD, r.At.UTC()}
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		err := insertValues(ctx, tx, `INSERT INTO monitor_results (`+monitorResultColumns+`)`,
			` ON CONFLICT (project_id, call_id, scorer_ref) DO UPDATE SET monitor = excluded.monitor,
			monitor_ref = excluded.monitor_ref, status = excluded.status, message = excluded.message,
			cost_usd = excluded.cost_usd, scored_at = excluded.scored_at`, rows)
		if err != nil {
			return fmt.Errorf("record monitor results: %w", err)
		}
		return nil
	})
}

// MonitorResults implements storage.MonitorStore.
func (s *Store) MonitorResults(ctx context.Context, projectID string, callIDs []string) ([]storage.MonitorResult, error) {
	var out []storage.MonitorResult
	for chunk := range slices.Chunk(callIDs, monitorChunk) {
		rows, err := s.db.QueryContext(ctx, `SELECT `+monitorResultColumns+` FROM monitor_results
			WHERE project_id = ? AND call_id IN (`+qmarks(len(chunk))+`) ORDER BY call_id, scorer_ref`,
			append([]any{projectID}, anyStrings(chunk)...)...)
		if err != nil {
			return nil, fmt.Errorf("read monitor results: %w", err)
		}
		if out, err = scanMonitorResults(rows, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MonitorFailures implements storage.MonitorStore.
func (s *Store) MonitorFailures(ctx context.Context, projectID string, limit int) ([]storage.MonitorResult, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+monitorResultColumns+` FROM monitor_results
		WHERE project_id = ? AND status <> ? ORDER BY scored_at DESC, call_id LIMIT ?`, projectID, storage.MonitorScored, limit)
	if err != nil {
		return nil, fmt.Errorf("read monitor failures: %w", err)
	}
	return scanMonitorResults(rows, nil)
}

func scanMonitorResults(rows *sql.Rows, out []storage.MonitorResult) ([]storage.MonitorResult, error) {
	more, err := collectRows(rows, "read monitor results", func(rows *sql.Rows) (storage.MonitorResult, error) {
		var r storage.MonitorResult
		err := rows.Scan(&r.ProjectID, &r.CallID, &r.ScorerRef, &r.Monitor, &r.MonitorRef, &r.Status, &r.Message, &r.CostUSD, &r.At)
		r.At = r.At.UTC()
		return r, err
	})
	return append(out, more...), err
}

// MonitorStats implements storage.MonitorStore.
func (s *Store) MonitorStats(ctx context.Context, projectID string, since time.Time) ([]storage.MonitorStats, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT monitor,
			count(*) FILTER (WHERE status = ?), count(*) FILTER (WHERE status = ?), count(*) FILTER (WHERE status = ?),
			coalesce(sum(cost_usd), 0), max(scored_at)
		FROM monitor_results WHERE project_id = ? AND scored_at >= ? GROUP BY monitor ORDER BY monitor`,
		storage.MonitorScored, storage.MonitorFailed, storage.MonitorSkipped, projectID, since.UTC())
	if err != nil {
		return nil, fmt.Errorf("read monitor stats: %w", err)
	}
	return collectRows(rows, "read monitor stats", func(rows *sql.Rows) (storage.MonitorStats, error) {
		var st storage.MonitorStats
		var last sql.NullTime
		err := rows.Scan(&st.Monitor, &st.Scored, &st.Failed, &st.Skipped, &st.CostUSD, &last)
		if last.Valid {
			t := last.Time.UTC()
			st.LastAt = &t
		}
		return st, err
	})
}

// ProjectsWithObjectClass implements storage.MonitorStore.
func (s *Store) ProjectsWithObjectClass(ctx context.Context, baseClass string, limit int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT project_id FROM object_versions
		WHERE base_object_class = ? AND deleted_at IS NULL ORDER BY project_id LIMIT ?`, baseClass, limit)
	if err != nil {
		return nil, fmt.Errorf("read projects with %s objects: %w", baseClass, err)
	}
	return collectRows(rows, "read projects with "+baseClass+" objects", func(rows *sql.Rows) (string, error) {
		var p string
		return p, rows.Scan(&p)
	})
}

// collectRows reads every row of rows with scan and closes them; op
// names the read in errors.
func collectRows[T any](rows *sql.Rows, op string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}
