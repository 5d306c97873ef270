package storekit

import (
	"context"
	"fmt"
	"slices"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/sqlgen"
)

// PriceColumns is the column order of price inserts and of ProjectPrices
// reads, the order of PriceValues and PriceTargets.
const PriceColumns = `id, pricing_level, pricing_level_id, provider_id, llm_id, effective_date,
	prompt_token_cost, completion_token_cost, cache_read_input_token_cost, cache_creation_input_token_cost,
	prompt_token_cost_unit, completion_token_cost_unit, created_by, created_at`

// CheckPrices refuses any row that is not a project-level row with an id.
func CheckPrices(prices []pricing.Price) error {
	for _, p := range prices {
		if p.Level != pricing.LevelProject || p.LevelID == "" || p.ID == "" || p.LLMID == "" {
			return fmt.Errorf("price %q for %q must be a project-level row with an id: %w", p.ID, p.LLMID, storage.ErrInvalidArgument)
		}
	}
	return nil
}

// PriceValues are the values of p in PriceColumns order, times in UTC.
func PriceValues(p pricing.Price) []any {
	return []any{p.ID, p.Level, p.LevelID, p.ProviderID, p.LLMID, p.EffectiveDate.UTC(),
		p.PromptTokenCost, p.CompletionTokenCost, p.CacheReadInputTokenCost, p.CacheCreationInputTokenCost,
		p.PromptTokenCostUnit, p.CompletionTokenCostUnit, p.CreatedBy, p.CreatedAt.UTC()}
}

// PriceTargets are the scan targets of p's fields in PriceColumns order.
func PriceTargets(p *pricing.Price) []any {
	return []any{&p.ID, &p.Level, &p.LevelID, &p.ProviderID, &p.LLMID, &p.EffectiveDate,
		&p.PromptTokenCost, &p.CompletionTokenCost, &p.CacheReadInputTokenCost, &p.CacheCreationInputTokenCost,
		&p.PromptTokenCostUnit, &p.CompletionTokenCostUnit, &p.CreatedBy, &p.CreatedAt}
}

// QueryPrices answers storage.CostStore.QueryPrices over the project's own
// rows.
func QueryPrices(ctx context.Context, db TableSQL, q storage.CostQuery) (storage.CostQueryRes, error) {
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
	scope := []sqlgen.TableScope{{Column: "pricing_level", Value: pricing.LevelProject}, {Column: "pricing_level_id", Value: q.ProjectID}}
	tq := sqlgen.TableQuery{Scope: scope, Fields: fields, Where: where, SortBy: q.SortBy, Limit: q.Limit, Offset: q.Offset}
	rows, err := db.Rows(ctx, sqlgen.PricesTable(), tq)
	if err != nil {
		return storage.CostQueryRes{}, fmt.Errorf("cost query: %w", err)
	}
	return storage.CostQueryRes{Results: rows}, nil
}
