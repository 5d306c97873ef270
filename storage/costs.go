package storage

import (
	"context"
	"encoding/json"

	"github.com/weftdev/weft/pricing"
)

// CostColumns are the fields /cost/query returns, in the order an
// unprojected query returns them.
var CostColumns = []string{
	"id", "llm_id", "prompt_token_cost", "completion_token_cost",
	"cache_read_input_token_cost", "cache_creation_input_token_cost",
	"prompt_token_cost_unit", "completion_token_cost_unit", "effective_date", "provider_id",
}

// CostQuery is an authorised /cost/query over the project's own prices.
// Fields and sort terms name price columns (CostColumns plus
// pricing_level, pricing_level_id, created_by, created_at in queries).
type CostQuery struct {
	ProjectID string
	Fields    []string // nil: CostColumns
	Where     json.RawMessage
	SortBy    []SortBy
	Limit     *int64
	Offset    int64
}

// CostQueryRes is the result of a price query: one JSON object per row.
type CostQueryRes struct {
	Results []json.RawMessage
}

// CostStore keeps project-level LLM prices (defaults are not stored: they
// come from the pricing table). Every method is scoped to its project.
type CostStore interface {
	// CreatePrices stores project-level rows (Level pricing.LevelProject,
	// LevelID the project); anything else is ErrInvalidArgument.
	CreatePrices(ctx context.Context, prices []pricing.Price) error
	QueryPrices(ctx context.Context, q CostQuery) (CostQueryRes, error)
	// PurgePrices deletes the project's rows with these ids.
	PurgePrices(ctx context.Context, projectID string, ids []string) error
	// ProjectPrices returns every project-level row of the given models,
	// for pricing.Compute together with the default table.
	ProjectPrices(ctx context.Context, projectID string, llmIDs []string) ([]pricing.Price, error)
	// AllProjectPrices returns every project-level row of the project, to
	// price calls in SQL (sorting by summary.weave.cost).
	AllProjectPrices(ctx context.Context, projectID string) ([]pricing.Price, error)
}
