package duckdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.CostStore = (*Store)(nil)

// CreatePrices implements storage.CostStore.
func (s *Store) CreatePrices(ctx context.Context, prices []pricing.Price) error {
	if err := storekit.CheckPrices(prices); err != nil {
		return err
	}
	if len(prices) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO llm_token_prices ("+storekit.PriceColumns+") VALUES ("+qmarks(14)+")")
		if err != nil {
			return fmt.Errorf("prepare price insert: %w", err)
		}
		defer stmt.Close()
		for _, p := range prices {
			if _, err := stmt.ExecContext(ctx, storekit.PriceValues(p)...); err != nil {
				return fmt.Errorf("insert price %s: %w", p.ID, err)
			}
		}
		return nil
	})
}

// QueryPrices implements storage.CostStore.
func (s *Store) QueryPrices(ctx context.Context, q storage.CostQuery) (storage.CostQueryRes, error) {
	return storekit.QueryPrices(ctx, tableSQL{s}, q)
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
	return s.readPrices(ctx, " AND llm_id IN ("+qmarks(len(llmIDs))+")", projectID, anyStrings(llmIDs)...)
}

// AllProjectPrices implements storage.CostStore.
func (s *Store) AllProjectPrices(ctx context.Context, projectID string) ([]pricing.Price, error) {
	return s.readPrices(ctx, "", projectID)
}

// readPrices reads the project's rows that meet cond, whose placeholders
// args fill.
func (s *Store) readPrices(ctx context.Context, cond, projectID string, args ...any) ([]pricing.Price, error) {
	args = append([]any{pricing.LevelProject, projectID}, args...)
	rows, err := s.db.QueryContext(ctx, "SELECT "+storekit.PriceColumns+
		" FROM llm_token_prices WHERE pricing_level = ? AND pricing_level_id = ?"+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("project prices: %w", err)
	}
	defer rows.Close()
	var out []pricing.Price
	for rows.Next() {
		var p pricing.Price
		if err := rows.Scan(storekit.PriceTargets(&p)...); err != nil {
			return nil, fmt.Errorf("project prices: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
