package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
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

// deleteCalls soft-deletes the live calls among d's ids and every live
// descendant, and returns how many calls that was (storekit's rules).
func deleteCalls(ctx context.Context, conn *sql.Conn, d *storage.CallDelete) (int, error) {
	doomed, err := storekit.CallsToDelete(ctx, callTree{conn}, d)
	if err != nil || len(doomed) == 0 {
		return 0, err
	}
	at := storekit.DeleteStamp(d.At, time.Now)
	_, err = conn.ExecContext(ctx, "UPDATE calls SET deleted_at = ? WHERE project_id = ? AND id IN (SELECT unnest(?::VARCHAR[]))",
		at, d.ProjectID, doomed)
	if err != nil {
		return 0, fmt.Errorf("soft-delete calls: %w", err)
	}
	return len(doomed), nil
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
