package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.CostStore = (*Store)(nil)

// projectPrices is the condition every price statement starts with: the
// project's own rows.
const projectPrices = "pricing_level = {level:String} AND pricing_level_id = {project:String}"

func projectPriceArgs(projectID string) []any {
	return []any{clickhouse.Named("level", pricing.LevelProject), clickhouse.Named("project", projectID)}
}

// CreatePrices implements storage.CostStore.
func (s *Store) CreatePrices(ctx context.Context, prices []pricing.Price) error {
	if err := storekit.CheckPrices(prices); err != nil {
		return err
	}
	return s.insertBatch(ctx, "llm_token_prices", storekit.PriceColumns, len(prices),
		func(i int) []any { return storekit.PriceValues(prices[i]) })
}

// QueryPrices implements storage.CostStore.
func (s *Store) QueryPrices(ctx context.Context, q storage.CostQuery) (storage.CostQueryRes, error) {
	return storekit.QueryPrices(ctx, tableSQL{s}, q)
}

// PurgePrices implements storage.CostStore. Only ids found stored go to
// the lightweight DELETE, so purging unknown ids costs no mutation.
func (s *Store) PurgePrices(ctx context.Context, projectID string, ids []string) error {
	for _, chunk := range chunks(storekit.DistinctSorted(ids)) {
		args := append(projectPriceArgs(projectID), clickhouse.Named("ids", chunk))
		found, err := s.stringColumn(ctx, "read price ids", "SELECT DISTINCT id FROM llm_token_prices WHERE "+projectPrices+
			" AND id IN {ids:Array(String)}", args...)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			continue
		}
		args = append(projectPriceArgs(projectID), clickhouse.Named("ids", found))
		if err := s.conn.Exec(ctx, "DELETE FROM llm_token_prices WHERE "+projectPrices+" AND id IN {ids:Array(String)}", args...); err != nil {
			return wrapErr("purge prices", err)
		}
	}
	return nil
}

// ProjectPrices implements storage.CostStore.
func (s *Store) ProjectPrices(ctx context.Context, projectID string, llmIDs []string) ([]pricing.Price, error) {
	var out []pricing.Price
	for _, chunk := range chunks(storekit.DistinctSorted(llmIDs)) {
		found, err := s.readPrices(ctx, " AND llm_id IN {llms:Array(String)}", projectID, clickhouse.Named("llms", chunk))
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// AllProjectPrices implements storage.CostStore.
func (s *Store) AllProjectPrices(ctx context.Context, projectID string) ([]pricing.Price, error) {
	return s.readPrices(ctx, "", projectID)
}

// readPrices reads the project's rows that meet cond, whose parameters
// args name.
func (s *Store) readPrices(ctx context.Context, cond, projectID string, args ...any) ([]pricing.Price, error) {
	var out []pricing.Price
	err := s.eachRow(ctx, "project prices", "SELECT "+storekit.PriceColumns+" FROM llm_token_prices WHERE "+projectPrices+cond,
		func(rows driver.Rows) error {
			var p pricing.Price
			err := rows.Scan(storekit.PriceTargets(&p)...)
			p.EffectiveDate, p.CreatedAt = p.EffectiveDate.UTC(), p.CreatedAt.UTC()
			out = append(out, p)
			return err
		}, append(projectPriceArgs(projectID), args...)...)
	return out, err
}
