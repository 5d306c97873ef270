package clickhouse

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/storekit"
)

// ListProjects implements storage.ProjectLister.
func (s *Store) ListProjects(ctx context.Context, entity string) ([]storage.ProjectSummary, error) {
	var calls, data []storage.ProjectSummary
	err := s.eachValueRow(ctx, sqlgen.ProjectsSelect(s.dialect, entity), func(col map[string]any) {
		id, _ := col["project_id"].(string)
		last, _ := col["last_call_at"].(time.Time)
		calls = append(calls, storage.ProjectSummary{ProjectID: id, CallCount: toInt64(col["call_count"]), LastCallAt: last.UTC()})
	})
	if err != nil {
		return nil, wrapErr("list projects with calls", err)
	}
	err = s.eachValueRow(ctx, sqlgen.ProjectDataSelect(s.dialect, entity), func(col map[string]any) {
		id, _ := col["project_id"].(string)
		last, _ := col["last_at"].(time.Time)
		data = append(data, storage.ProjectSummary{ProjectID: id, ObjectCount: toInt64(col["object_count"]),
			TableCount: toInt64(col["table_count"]), FeedbackCount: toInt64(col["feedback_count"]), LastActivityAt: last.UTC()})
	})
	if err != nil {
		return nil, wrapErr("list projects with objects, tables or feedback", err)
	}
	return storekit.MergeProjects(calls, data), nil
}
