package duckdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/storekit"
)

// ListProjects implements storage.ProjectLister.
func (s *Store) ListProjects(ctx context.Context, entity string) ([]storage.ProjectSummary, error) {
	d := sqlgen.NewDuckDB()
	var calls, data []storage.ProjectSummary
	err := s.eachRow(ctx, sqlgen.ProjectsSelect(d, entity), func(rows *sql.Rows) error {
		var p storage.ProjectSummary
		if err := rows.Scan(&p.ProjectID, &p.CallCount, &p.LastCallAt); err != nil {
			return err
		}
		p.LastCallAt = p.LastCallAt.UTC()
		calls = append(calls, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list projects with calls: %w", err)
	}
	err = s.eachRow(ctx, sqlgen.ProjectDataSelect(d, entity), func(rows *sql.Rows) error {
		var p storage.ProjectSummary
		if err := rows.Scan(&p.ProjectID, &p.ObjectCount, &p.TableCount, &p.FeedbackCount, &p.LastActivityAt); err != nil {
			return err
		}
		p.LastActivityAt = p.LastActivityAt.UTC()
		data = append(data, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list projects with objects, tables or feedback: %w", err)
	}
	return storekit.MergeProjects(calls, data), nil
}

var _ storage.ProjectStatsReader = (*Store)(nil)

// ProjectStats implements storage.ProjectStatsReader: the project's calls
// from the chart rollups and all rows from the table's count, so the
// answer takes milliseconds however many calls the store holds.
func (s *Store) ProjectStats(ctx context.Context, projectID string) (storage.ProjectStats, error) {
	var st storage.ProjectStats
	project, err := s.CountCalls(ctx, storage.CallsQuery{ProjectID: projectID}, 0)
	if err != nil {
		return st, fmt.Errorf("project stats: %w", err)
	}
	var all, used int64
	err = s.eachRow(ctx, sqlgen.Statement{SQL: "SELECT (SELECT count(*) FROM " + callsTable + "), " +
		"(SELECT CAST(used_blocks * block_size AS BIGINT) FROM pragma_database_size() WHERE database_name = '" + callsCatalog + "')"},
		func(rows *sql.Rows) error { return rows.Scan(&all, &used) })
	if err != nil {
		return st, fmt.Errorf("project stats: calls on disk: %w", err)
	}
	st.TraceBytes = storage.ShareOf(used, project.Count, all)
	err = s.eachRow(ctx, sqlgen.ProjectBytesSelect(sqlgen.NewDuckDB(), projectID), func(rows *sql.Rows) error {
		return rows.Scan(&st.ObjectBytes, &st.TableBytes, &st.FileBytes)
	})
	if err != nil {
		return st, fmt.Errorf("project stats: objects, tables and files: %w", err)
	}
	return st, nil
}
