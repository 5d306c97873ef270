package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// updateCall renames a live call. A call with no row yet (its start is
// still on the way) gets a row holding the name, which the start merges
// into; a deleted call stays as it is.
func (s *Store) updateCall(ctx context.Context, conn *sql.Conn, u *storage.CallUpdate) error {
	near, nearArgs := s.startedNear(u.ProjectID, u.ID)
	res, err := conn.ExecContext(ctx,
		"UPDATE calls SET display_name = ?, renamed = true WHERE project_id = ? AND id = ? AND deleted_at IS NULL"+near,
		append([]any{nullStr(u.DisplayName), u.ProjectID, u.ID}, nearArgs...)...)
	if err != nil {
		return fmt.Errorf("update call %s: %w", u.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	_, err = conn.ExecContext(ctx, "INSERT INTO calls (project_id, id, has_start, has_end, started_at, display_name, renamed) "+
		"SELECT ?, ?, false, false, ?, ?, true WHERE NOT EXISTS (SELECT 1 FROM calls WHERE project_id = ? AND id = ?"+near+")",
		append([]any{u.ProjectID, u.ID, time.Now().UTC(), nullStr(u.DisplayName), u.ProjectID, u.ID}, nearArgs...)...)
	if err != nil {
		return fmt.Errorf("keep the rename of call %s for its start: %w", u.ID, err)
	}
	s.ids.add(u.ProjectID, u.ID)
	s.located.recordStartless(u.ProjectID, u.ID)
	return nil
}

// startedNear is a predicate (with its arguments) that narrows a
// statement on one call's row to the start times the locator places it
// in, so that DuckDB reads those blocks alone: a rename otherwise
// compared the id of every call of the project (two thirds of what a
// restarted center spent storing an agent's log). Empty when the locator
// cannot place the row; one range (the span of those it knows), since
// DuckDB skips blocks by one range predicate but not by an OR of several.
func (s *Store) startedNear(project, id string) (string, []any) {
	ranges, ok := s.located.rowsWithin(project, []string{id})
	switch {
	case !ok:
		return "", nil
	case len(ranges) == 0:
		return " AND false", nil
	}
	r := coarsen(ranges, 1)[0]
	return " AND started_at BETWEEN ? AND ?", []any{r.From.UTC(), r.To.UTC()}
}

// deleteCalls soft-deletes the live calls among d's ids and every live
// descendant, and returns how many calls that was (storekit's rules).
// Requested ids with no row yet get a deleted row, so their start, when
// it lands, is stored deleted.
func (s *Store) deleteCalls(ctx context.Context, conn *sql.Conn, d *storage.CallDelete, marks minuteMarks) (int, error) {
	doomed, err := storekit.CallsToDelete(ctx, callTree{conn}, d)
	if err != nil {
		return 0, err
	}
	at := storekit.DeleteStamp(d.At, time.Now)
	if len(doomed) > 0 {
		if err := softDeleteCalls(ctx, conn, d.ProjectID, doomed, at, marks); err != nil {
			return 0, err
		}
	}
	ids := storekit.DistinctSorted(d.IDs)
	rows, err := conn.QueryContext(ctx, "INSERT INTO calls (project_id, id, has_start, has_end, started_at, deleted_at) "+
		"SELECT ?, i, false, false, ?, ? FROM unnest(?::VARCHAR[]) AS t(i) "+
		"WHERE NOT EXISTS (SELECT 1 FROM calls c WHERE c.project_id = ? AND c.id = t.i) RETURNING id",
		d.ProjectID, time.Now().UTC(), at, ids, d.ProjectID)
	if err != nil {
		return 0, fmt.Errorf("keep the delete of calls not stored yet: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return 0, fmt.Errorf("keep the delete of calls not stored yet: %w", err)
		}
		s.located.recordStartless(d.ProjectID, id)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("keep the delete of calls not stored yet: %w", err)
	}
	for _, id := range ids {
		s.ids.add(d.ProjectID, id)
	}
	return len(doomed), nil
}

// softDeleteCalls stamps the project's calls ids deleted at at, and marks the
// minutes of those that had a start.
func softDeleteCalls(ctx context.Context, conn *sql.Conn, project string, ids []string, at time.Time, marks minuteMarks) error {
	rows, err := conn.QueryContext(ctx, "UPDATE calls SET deleted_at = ? WHERE project_id = ? AND id IN (SELECT unnest(?::VARCHAR[])) "+
		"RETURNING CASE WHEN has_start THEN started_at END", at, project, ids)
	if err != nil {
		return fmt.Errorf("soft-delete calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var started sql.NullTime
		if err := rows.Scan(&started); err != nil {
			return fmt.Errorf("soft-delete calls: %w", err)
		}
		marks.add(project, started.Time)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("soft-delete calls: %w", err)
	}
	return nil
}

// callTree is a write's connection as storekit.CallsToDelete walks it.
type callTree struct{ conn *sql.Conn }

func (c callTree) LiveCalls(ctx context.Context, projectID string, ids []string) ([]string, error) {
	return c.ids(ctx, "id", projectID, ids)
}

func (c callTree) LiveChildren(ctx context.Context, projectID string, parents []string) ([]string, error) {
	return c.ids(ctx, "parent_id", projectID, parents)
}

// ids lists the live calls of the project whose column is one of vals.
func (c callTree) ids(ctx context.Context, column, projectID string, vals []string) ([]string, error) {
	rows, err := c.conn.QueryContext(ctx, "SELECT id FROM calls WHERE project_id = ? AND "+column+
		" IN (SELECT unnest(?::VARCHAR[])) AND deleted_at IS NULL", projectID, vals)
	if err != nil {
		return nil, fmt.Errorf("find calls to delete: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find calls to delete: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
