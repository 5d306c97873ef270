package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
)

func updateCall(ctx context.Context, conn *sql.Conn, u *storage.CallUpdate) error {
	_, err := conn.ExecContext(ctx,
		"UPDATE calls SET display_name = ? WHERE project_id = ? AND id = ? AND deleted_at IS NULL",
		nullStr(u.DisplayName), u.ProjectID, u.ID)
	if err != nil {
		return fmt.Errorf("update call %s: %w", u.ID, err)
	}
	return nil
}

// deleteCalls soft-deletes the ids and every live descendant reachable by
// parent links, and returns the size of that id set (requested ids count
// even when unknown, as the reference server does).
func deleteCalls(ctx context.Context, conn *sql.Conn, d *storage.CallDelete) (int, error) {
	if len(d.IDs) == 0 {
		return 0, nil
	}
	in := placeholders(len(d.IDs))
	args := []any{d.ProjectID}
	for _, id := range d.IDs {
		args = append(args, id)
	}
	args = append(args, d.ProjectID)
	q := `WITH RECURSIVE tree(id) AS (
	    SELECT id FROM calls WHERE project_id = ? AND id IN (` + in + `) AND deleted_at IS NULL
	    UNION
	    SELECT c.id FROM calls c JOIN tree ON c.parent_id = tree.id
	    WHERE c.project_id = ? AND c.deleted_at IS NULL
	) SELECT DISTINCT id FROM tree`
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("find descendants: %w", err)
	}
	all := make(map[string]bool, len(d.IDs))
	for _, id := range d.IDs {
		all[id] = true
	}
	var found []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		all[id] = true
		found = append(found, id)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for chunk := range chunks(found, 1000) {
		upd := "UPDATE calls SET deleted_at = ? WHERE project_id = ? AND id IN (" + placeholders(len(chunk)) + ")"
		if _, err := conn.ExecContext(ctx, upd, append([]any{d.At.UTC(), d.ProjectID}, chunk...)...); err != nil {
			return 0, fmt.Errorf("soft-delete calls: %w", err)
		}
	}
	return len(all), nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func chunks(vals []any, size int) func(func([]any) bool) {
	return func(yield func([]any) bool) {
		for len(vals) > 0 {
			n := min(size, len(vals))
			if !yield(vals[:n]) {
				return
			}
			vals = vals[n:]
		}
	}
}
