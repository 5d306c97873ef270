package clickhouse

import (
	"context"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/tablesql"
)

var _ storage.CostStore = (*Store)(nil)

// priceColumns is the column order of inserts and of ProjectPrices reads.
const priceColumns = `id, pricing_level, pricing_level_id, provider_id, llm_id, effective_date,
	prompt_token_cost, completion_token_cost, cache_read_input_token_cost, cache_creation_input_token_cost,
	prompt_token_cost_unit, completion_token_cost_unit, created_by, created_at`

// projectPrices is the condition every price statement starts with: the
// project's own rows.
const projectPrices = "pricing_level = {level:String} AND pricing_level_id = {project:String}"

func projectPriceArgs(projectID string) []any {
	return []any{clickhouse.Named("level", pricing.LevelProject), clickhouse.Named("project", projectID)}
}

// CreatePrices implements storage.CostStore.
func (s *Store) CreatePrices(ctx context.Context, prices []pricing.Price) error {
	for _, p := range prices {
		if p.Level != pricing.LevelProject || p.LevelID == "" || p.ID == "" || p.LLMID == "" {
			return fmt.Errorf("price %q for %q must be a project-level row with an id: %w", p.ID, p.LLMID, storage.ErrInvalidArgument)
		}
	}
	return s.insertBatch(ctx, "llm_token_prices", priceColumns, len(prices), func(i int) []any {
		p := prices[i]
		return []any{p.ID, p.Level, p.LevelID, p.ProviderID, p.LLMID, p.EffectiveDate.UTC(),
			p.PromptTokenCost, p.CompletionTokenCost, p.CacheReadInputTokenCost, p.CacheCreationInputTokenCost,
			p.PromptTokenCostUnit, p.CompletionTokenCostUnit, p.CreatedBy, p.CreatedAt.UTC()}
	})
}

// QueryPrices implements storage.CostStore.
func (s *Store) QueryPrices(ctx context.Context, q storage.CostQuery) (storage.CostQueryRes, error) {
	fields := q.Fields
	if fields == nil {
		fields = storage.CostColumns
	}
	for _, f := range fields {
		if !slices.Contains(storage.CostColumns, f) {
			return storage.CostQueryRes{}, fmt.Errorf("Unknown field: %s; fields must be among %v: %w", f, storage.CostColumns, storage.ErrInvalidArgument)
		}
	}
	where, err := querylang.Parse(q.Where)
	if err != nil {
		return storage.CostQueryRes{}, err
	}
	scope := []tablesql.Scope{{Column: "pricing_level", Value: pricing.LevelProject}, {Column: "pricing_level_id", Value: q.ProjectID}}
	tq := tablesql.Query{Scope: scope, Fields: fields, Where: where, SortBy: q.SortBy, Limit: q.Limit, Offset: q.Offset}
	rows, err := s.tableSQLRows(ctx, tablesql.PricesTable(), tq)
	if err != nil {
		return storage.CostQueryRes{}, fmt.Errorf("cost query: %w", err)
	}
	return storage.CostQueryRes{Results: rows}, nil
}

// PurgePrices implements storage.CostStore. Only ids found stored go to
// the lightweight DELETE, so purging unknown ids costs no mutation.
func (s *Store) PurgePrices(ctx context.Context, projectID string, ids []string) error {
	for _, chunk := range chunks(distinctSorted(ids)) {
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
	for _, chunk := range chunks(distinctSorted(llmIDs)) {
		err := s.eachRow(ctx, "project prices", "SELECT "+priceColumns+" FROM llm_token_prices WHERE "+projectPrices+
			" AND llm_id IN {llms:Array(String)}", func(rows driver.Rows) error {
			var p pricing.Price
			err := rows.Scan(&p.ID, &p.Level, &p.LevelID, &p.ProviderID, &p.LLMID, &p.EffectiveDate,
				&p.PromptTokenCost, &p.CompletionTokenCost, &p.CacheReadInputTokenCost, &p.CacheCreationInputTokenCost,
				&p.PromptTokenCostUnit, &p.CompletionTokenCostUnit, &p.CreatedBy, &p.CreatedAt)
			p.EffectiveDate, p.CreatedAt = p.EffectiveDate.UTC(), p.CreatedAt.UTC()
			out = append(out, p)
			return err
		}, append(projectPriceArgs(projectID), clickhouse.Named("llms", chunk))...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
