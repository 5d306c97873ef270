package duckdb

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/storage"
)

var _ storage.RetentionStore = (*Store)(nil)

// AddRetentionChange implements storage.RetentionStore.
func (s *Store) AddRetentionChange(ctx context.Context, c storage.RetentionChange) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO retention_changes VALUES (?, ?, ?, ?)", c.ProjectID, c.Days, c.At.UTC(), c.By)
	if err != nil {
		return fmt.Errorf("store retention change: %w", err)
	}
	return nil
}

// RetentionChanges implements storage.RetentionStore.
func (s *Store) RetentionChanges(ctx context.Context) ([]storage.RetentionChange, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT project_id, days, changed_at, changed_by FROM retention_changes ORDER BY project_id, changed_at")
	if err != nil {
		return nil, fmt.Errorf("read retention changes: %w", err)
	}
	defer rows.Close()
	var out []storage.RetentionChange
	for rows.Next() {
		var c storage.RetentionChange
		if err := rows.Scan(&c.ProjectID, &c.Days, &c.At, &c.By); err != nil {
			return nil, fmt.Errorf("read retention changes: %w", err)
		}
		c.At = c.At.UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read retention changes: %w", err)
	}
	return out, nil
}
