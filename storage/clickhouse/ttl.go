package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
)

var _ storage.RetentionStore = (*Store)(nil)

// AddRetentionChange implements storage.RetentionStore.
func (s *Store) AddRetentionChange(ctx context.Context, c storage.RetentionChange) error {
	return s.insertBatch(ctx, "retention_changes", "project_id, days, changed_at, changed_by", 1,
		func(int) []any { return []any{c.ProjectID, uint32(c.Days), c.At.UTC(), c.By} })
}

// RetentionChanges implements storage.RetentionStore.
func (s *Store) RetentionChanges(ctx context.Context) ([]storage.RetentionChange, error) {
	var out []storage.RetentionChange
	err := s.eachRow(ctx, "read retention changes",
		"SELECT project_id, toInt64(days), changed_at, changed_by FROM retention_changes ORDER BY project_id, changed_at",
		func(rows driver.Rows) error {
			var c storage.RetentionChange
			var days int64
			if err := rows.Scan(&c.ProjectID, &days, &c.At, &c.By); err != nil {
				return err
			}
			c.Days, c.At = int(days), c.At.UTC()
			out = append(out, c)
			return nil
		})
	return out, err
}
