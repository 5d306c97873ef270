package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

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

// CreatePrices implements storage.CostStore.
func (s *Store) CreatePrices(ctx context.Context, prices []pricing.Price) error {
	for _, p := range prices {
		if p.Level != pricing.LevelProject || p.LevelID == "" || p.ID == "" || p.LLMID == "" {
			return fmt.Errorf("price %q for %q must be a project-level row with an id: %w", p.ID, p.LLMID, storage.ErrInvalidArgument)
		}
	}
	if len(prices) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO llm_token_prices ("+priceColumns+") VALUES ("+qmarks(14)+")")
		if err != nil {
			return fmt.Errorf("prepare price insert: %w", err)
		}
		defer stmt.Close()
		for _, p := range prices {
			_, err := stmt.ExecContext(ctx, p.ID, p.Level, p.LevelID, p.ProviderID, p.LLMID, p.EffectiveDate.UTC(),
				p.PromptTokenCost, p.CompletionTokenCost, p.CacheReadInputTokenCost, p.CacheCreationInputTokenCost,
				p.PromptTokenCostUnit, p.CompletionTokenCostUnit, p.CreatedBy, p.CreatedAt.UTC())
			if err != nil {
				return fmt.Errorf("insert price %s: %w", p.ID, err)
			}
		}
		return nil
	})
}

// projectScope limits every price statement to the project's own rows.
func projectScope(projectID string) []tablesql.Scope {
	return []tablesql.Scope{{Column: "pricing_level", Value: pricing.LevelProject}, {Column: "pricing_level_id", Value: projectID}}
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
	tq := tablesql.Query{Scope: projectScope(q.ProjectID), Fields: fields, Where: where,
		SortBy: q.SortBy, Limit: q.Limit, Offset: q.Offset}
	rows, err := s.tableRows(ctx, tablesql.PricesTable(), tq)
	if err != nil {
		return storage.CostQueryRes{}, fmt.Errorf("cost query: %w", err)
	}
	return storage.CostQueryRes{Results: rows}, nil
}

// PurgePrices implements storage.CostStore.
func (s *Store) PurgePrices(ctx context.Context, projectID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := append([]any{pricing.LevelProject, projectID}, anyStrings(ids)...)
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM llm_token_prices WHERE pricing_level = ? AND pricing_level_id = ? AND id IN ("+
			qmarks(len(ids))+")", args...)
		if err != nil {
			return fmt.Errorf("purge prices: %w", err)
		}
		return nil
	})
}

// ProjectPrices implements storage.CostStore.
func (s *Store) ProjectPrices(ctx context.Context, projectID string, llmIDs []string) ([]pricing.Price, error) {
	if len(llmIDs) == 0 {
		return nil, nil
	}
	args := append([]any{pricing.LevelProject, projectID}, anyStrings(llmIDs)...)
	rows, err := s.db.QueryContext(ctx, "SELECT "+priceColumns+" FROM llm_token_prices WHERE pricing_level = ? AND pricing_level_id = ? AND llm_id IN ("+
		qmarks(len(llmIDs))+")", args...)
	if err != nil {
		return nil, fmt.Errorf("project prices: %w", err)
	}
	defer rows.Close()
	var out []pricing.Price
	for rows.Next() {
		var p pricing.Price
		err := rows.Scan(&p.ID, &p.Level, &p.LevelID, &p.ProviderID, &p.LLMID, &p.EffectiveDate,
			&p.PromptTokenCost, &p.CompletionTokenCost, &p.CacheReadInputTokenCost, &p.CacheCreationInputTokenCost,
			&p.PromptTokenCostUnit, &p.CompletionTokenCostUnit, &p.CreatedBy, &p.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("project prices: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
