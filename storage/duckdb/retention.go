package duckdb

import (
	"context"
	"database/sql"
	"fmt"
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
		listed = append(listed, project)
		if keep <= 0 {
			continue
		}
		n, err := s.deleteOlder(ctx, "project_id = ?", []any{project}, now.Add(-keep))
		if err != nil {
			return total, err
		}
		total += n
	}
	if r.Default > 0 {
		where, args := "true", []any(nil)
		if len(listed) > 0 {
			where, args = "project_id NOT IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(listed)), ", ")+")", listed
		}
		n, err := s.deleteOlder(ctx, where, args, now.Add(-r.Default))
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// deleteOlder deletes in a transaction of its own, committed as call
// writes are (inCallsTx).
func (s *Store) deleteOlder(ctx context.Context, where string, args []any, before time.Time) (int64, error) {
	var n int64
	err := s.inCallsTx(ctx, func(conn *sql.Conn) error {
		res, err := conn.ExecContext(ctx, "DELETE FROM calls WHERE "+where+" AND coalesce(started_at, ended_at) < ?",
			append(args, before.UTC())...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return expireMinutes(ctx, conn, where, args, before)
	})
	if err != nil {
		return 0, fmt.Errorf("expire calls: %w", err)
	}
	return n, nil
}
