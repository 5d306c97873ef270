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

var _ storage.ProjectStatsReader = (*Store)(nil)

// ProjectStats implements storage.ProjectStatsReader: the project's calls
// by the primary key, and the calls table's bytes on disk from its active
// parts.
func (s *Store) ProjectStats(ctx context.Context, projectID string) (storage.ProjectStats, error) {
	var st storage.ProjectStats
	project, err := s.CountCalls(ctx, storage.CallsQuery{ProjectID: projectID}, 0)
	if err != nil {
		return st, wrapErr("project stats", err)
	}
	var all, onDisk int64
	err = s.eachValueRow(ctx, sqlgen.Statement{SQL: "SELECT toInt64(sum(rows)) AS all_rows, toInt64(sum(bytes_on_disk)) AS on_disk " +
		"FROM system.parts WHERE database = currentDatabase() AND table = 'calls' AND active"}, func(col map[string]any) {
		all, onDisk = toInt64(col["all_rows"]), toInt64(col["on_disk"])
	})
	if err != nil {
		return st, wrapErr("project stats: calls on disk", err)
	}
	st.TraceBytes = storage.ShareOf(onDisk, project.Count, all)
	err = s.eachValueRow(ctx, sqlgen.ProjectBytesSelect(s.dialect, projectID), func(col map[string]any) {
		st.ObjectBytes, st.TableBytes, st.FileBytes = toInt64(col["object_bytes"]), toInt64(col["table_bytes"]), toInt64(col["file_bytes"])
	})
	if err != nil {
		return st, wrapErr("project stats: objects, tables and files", err)
	}
	return st, nil
}
