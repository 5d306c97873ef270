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
