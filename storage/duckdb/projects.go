package duckdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// ListProjects implements storage.ProjectLister.
func (s *Store) ListProjects(ctx context.Context, entity string) ([]storage.ProjectSummary, error) {
	var out []storage.ProjectSummary
	err := s.eachRow(ctx, sqlgen.ProjectsSelect(sqlgen.NewDuckDB(), entity), func(rows *sql.Rows) error {
		var p storage.ProjectSummary
		if err := rows.Scan(&p.ProjectID, &p.CallCount, &p.LastCallAt); err != nil {
			return err
		}
		p.LastCallAt = p.LastCallAt.UTC()
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}
