package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

var _ storage.CallExpirer = (*Store)(nil)

// ExpireCalls implements storage.CallExpirer: it deletes calls whose start
// is older than their project's retention, as ClickHouse's TTL does for
// the scale-out store, and returns how many rows went.
func (s *Store) ExpireCalls(ctx context.Context, r storage.Retention, now time.Time) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var total int64
	var listed []any
	for project, keep := range r.Projects {
		if _, changed := r.Changes[project]; changed {
			continue // its spans below cover it
		}
		listed = append(listed, project)
		if keep <= 0 {
			continue
		}
		n, err := s.deleteOlder(ctx, "project_id = ?", []any{project}, time.Time{}, now.Add(-keep))
		if err != nil {
			return total, err
		}
		total += n
	}
	for project, changes := range r.Changes {
		listed = append(listed, project)
		for _, sp := range retentionSpans(r, project, changes) {
			if sp.keep <= 0 {
				continue
			}
			before := now.Add(-sp.keep)
			if !sp.to.IsZero() && sp.to.Before(before) {
				before = sp.to
			}
			n, err := s.deleteOlder(ctx, "project_id = ?", []any{project}, sp.from, before)
			if err != nil {
				return total, err
			}
			total += n
		}
	}
	if r.Default > 0 {
		where, args := "true", []any(nil)
		if len(listed) > 0 {
			where, args = "project_id NOT IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(listed)), ", ")+")", listed
		}
		n, err := s.deleteOlder(ctx, where, args, time.Time{}, now.Add(-r.Default))
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// retentionSpan is a run of start times [from, to) whose calls are kept
// for keep; a zero from or to leaves that side open.
type retentionSpan struct {
	from, to time.Time
	keep     time.Duration
}

// retentionSpans splits a project's calls by the retention change in
// force when they started, as storage.Retention.For picks it.
func retentionSpans(r storage.Retention, project string, changes []storage.RetentionChange) []retentionSpan {
	spans := []retentionSpan{{to: changes[0].At, keep: r.For(project, changes[0].At.Add(-time.Nanosecond))}}
	for i, c := range changes {
		sp := retentionSpan{from: c.At, keep: c.Keep()}
		if i+1 < len(changes) {
			sp.to = changes[i+1].At
		}
		spans = append(spans, sp)
	}
	return spans
}

// deleteOlder deletes the calls where selects that started in [from,
// before) (a zero from: any time before), in a transaction of its own,
// committed as call writes are (inCallsTx).
func (s *Store) deleteOlder(ctx context.Context, where string, args []any, from, before time.Time) (int64, error) {
	cond, condArgs := where+" AND coalesce(started_at, ended_at) < ?", append(slices.Clone(args), before.UTC())
	if !from.IsZero() {
		cond, condArgs = cond+" AND coalesce(started_at, ended_at) >= ?", append(condArgs, from.UTC())
	}
	var n int64
	err := s.inCallsTx(ctx, func(conn *sql.Conn) error {
		res, err := conn.ExecContext(ctx, "DELETE FROM calls WHERE "+cond, condArgs...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return expireMinutes(ctx, conn, where, args, from, before)
	})
	if err != nil {
		return 0, fmt.Errorf("expire calls: %w", err)
	}
	return n, nil
}
