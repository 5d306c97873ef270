package duckdb

import (
	"context"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// costModelsSQL lists the models of a project's rollups, most used
// first, eight at most: each named model adds a branch every call of the
// others passes.
const costModelsSQL = `SELECT model FROM call_minute_usage WHERE project_id = ? AND model IS NOT NULL
	GROUP BY model ORDER BY count(*) DESC, model LIMIT 8`

// costModels is the rendering option of a read that prices calls (q
// names summary.weave.cost): the models the project's calls use most,
// from the chart rollups, priced as constants (sqlgen.CostModels). A
// hint only: a model the rollups do not hold yet is priced by lookup,
// and a failed read of them leaves every call to the lookup, the read's
// own statement reporting a store that fails.
func (s *Store) costModels(ctx context.Context, db queryer, q storage.CallsQuery) []sqlgen.CallsOption {
	if len(q.Prices) == 0 {
		return nil
	}
	rows, err := db.QueryContext(ctx, costModelsSQL, q.ProjectID)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var models []string
	for rows.Next() {
		var m string
		if rows.Scan(&m) != nil {
			return nil
		}
		models = append(models, m)
	}
	if rows.Err() != nil || len(models) == 0 {
		return nil
	}
	return []sqlgen.CallsOption{sqlgen.CostModels(models)}
}
