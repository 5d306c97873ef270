package clickhouse

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// ListProjects implements storage.ProjectLister.
func (s *Store) ListProjects(ctx context.Context, entity string) ([]storage.ProjectSummary, error) {
	var out []storage.ProjectSummary
	err := s.eachValueRow(ctx, sqlgen.ProjectsSelect(s.dialect, entity), func(col map[string]any) {
		id, _ := col["project_id"].(string)
		last, _ := col["last_call_at"].(time.Time)
		out = append(out, storage.ProjectSummary{ProjectID: id, CallCount: toInt64(col["call_count"]), LastCallAt: last.UTC()})
	})
	if err != nil {
		return nil, wrapErr("list projects", err)
	}
	return out, nil
}
