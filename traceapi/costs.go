package traceapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// purgeCostsMsg is the reference server's answer to a purge by anything
// but ids.
const purgeCostsMsg = "Can only purge costs by specifying one or more cost ids"

// CostsAPI serves the project price endpoints.
type CostsAPI struct {
	store    storage.CostStore
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
	now      func() time.Time
}

// NewCostsAPI builds the cost endpoints over store.
func NewCostsAPI(store storage.CostStore, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *CostsAPI {
	o := applyOptions(opts)
	return &CostsAPI{store: store, logger: logger, maxBytes: maxBodyBytes, limits: o.limits, budget: newReadBudget(o, logger), now: time.Now}
}

// Register adds the cost routes to mux; wrap is applied to every handler.
func (a *CostsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST /cost/create": a.create,
		"POST /cost/query":  a.budget.json(a.query),
		"POST /cost/purge":  a.purge,
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
}

// costInput is CostCreateInput; nested, so unknown keys are ignored.
type costInput struct {
	PromptTokenCost             *float64   `json:"prompt_token_cost"`
	CompletionTokenCost         *float64   `json:"completion_token_cost"`
	CacheReadInputTokenCost     *float64   `json:"cache_read_input_token_cost"`
	CacheCreationInputTokenCost *float64   `json:"cache_creation_input_token_cost"`
	PromptTokenCostUnit         *string    `json:"prompt_token_cost_unit"`
	CompletionTokenCostUnit     *string    `json:"completion_token_cost_unit"`
	EffectiveDate               *wire.Time `json:"effective_date"`
	ProviderID                  *string    `json:"provider_id"`
}

func (a *CostsAPI) create(r *http.Request, body []byte) (any, error) {
	var projectID, userID string
	var costs json.RawMessage
	err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID, "costs": &costs, "wb_user_id": &userID}, "project_id", "costs")
	if err != nil {
		return nil, err
	}
	p, err := httpapi.Authorize(r.Context(), projectID, auth.Write)
	if err != nil {
		return nil, err
	}
	llmIDs, inputs, err := decodeCosts(costs)
	if err != nil {
		return nil, err
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	prices := make([]pricing.Price, len(llmIDs))
	ids := make([][2]string, len(llmIDs))
	for i, llmID := range llmIDs {
		prices[i] = projectPrice(projectID, llmID, p.UserID, now, inputs[i])
		ids[i] = [2]string{prices[i].ID, llmID}
	}
	if err := a.store.CreatePrices(r.Context(), prices); err != nil {
		return nil, err
	}
	return map[string]any{"ids": ids}, nil
}

// decodeCosts reads the costs map in request order, validating each entry.
func decodeCosts(raw json.RawMessage) ([]string, []costInput, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, &wire.FieldError{Field: "costs", Msg: "must be an object mapping llm_id to its prices", Schema: wire.SchemaDict}
	}
	var ids []string
	var inputs []costInput
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, &wire.FieldError{Field: "costs", Msg: err.Error(), Schema: wire.SchemaJSON}
		}
		llmID, _ := tok.(string)
		var in costInput
		if err := dec.Decode(&in); err != nil {
			return nil, nil, &wire.FieldError{Field: "costs." + llmID, Msg: "must be an object of prices: " + err.Error(), Schema: wire.SchemaType}
		}
		if err := in.validate("costs." + llmID); err != nil {
			return nil, nil, err
		}
		ids, inputs = append(ids, llmID), append(inputs, in)
	}
	if len(ids) == 0 {
		return nil, nil, &wire.FieldError{Field: "costs", Msg: "must price at least one llm_id"}
	}
	return ids, inputs, nil
}

func (in costInput) validate(field string) error {
	costs := []struct {
		name     string
		v        *float64
		required bool
	}{
		{"prompt_token_cost", in.PromptTokenCost, true},
		{"completion_token_cost", in.CompletionTokenCost, true},
		{"cache_read_input_token_cost", in.CacheReadInputTokenCost, false},
		{"cache_creation_input_token_cost", in.CacheCreationInputTokenCost, false},
	}
	for _, c := range costs {
		switch {
		case c.v == nil && c.required:
			return wire.Missing(field+"."+c.name, ": USD per token")
		case c.v != nil && (*c.v < 0 || math.IsInf(*c.v, 0)):
			return &wire.FieldError{Field: field + "." + c.name, Msg: fmt.Sprintf("must be a non-negative number, got %v", *c.v)}
		}
	}
	return nil
}

// projectPrice applies the CostCreateInput defaults.
func projectPrice(projectID, llmID, userID string, now time.Time, in costInput) pricing.Price {
	p := pricing.Price{ID: uuid.Must(uuid.NewV7()).String(), Level: pricing.LevelProject, LevelID: projectID,
		ProviderID: "default", LLMID: llmID, EffectiveDate: now,
		PromptTokenCost: *in.PromptTokenCost, CompletionTokenCost: *in.CompletionTokenCost,
		PromptTokenCostUnit: pricing.UnitUSD, CompletionTokenCostUnit: pricing.UnitUSD, CreatedBy: userID, CreatedAt: now}
	if in.CacheReadInputTokenCost != nil {
		p.CacheReadInputTokenCost = *in.CacheReadInputTokenCost
	}
	if in.CacheCreationInputTokenCost != nil {
		p.CacheCreationInputTokenCost = *in.CacheCreationInputTokenCost
	}
	if in.PromptTokenCostUnit != nil && *in.PromptTokenCostUnit != "" {
		p.PromptTokenCostUnit = *in.PromptTokenCostUnit
	}
	if in.CompletionTokenCostUnit != nil && *in.CompletionTokenCostUnit != "" {
		p.CompletionTokenCostUnit = *in.CompletionTokenCostUnit
	}
	if in.EffectiveDate != nil && !in.EffectiveDate.IsZero() {
		p.EffectiveDate = in.EffectiveDate.UTC()
	}
	if in.ProviderID != nil && *in.ProviderID != "" {
		p.ProviderID = *in.ProviderID
	}
	return p
}

func (a *CostsAPI) query(r *http.Request, body []byte) (any, error) {
	q, err := decodeTableQuery(r, body, a.limits)
	if err != nil {
		return nil, err
	}
	res, err := a.store.QueryPrices(r.Context(), storage.CostQuery{ProjectID: q.ProjectID, Fields: q.Fields,
		Where: q.Query, SortBy: wire.StorageSort(q.SortBy), Limit: q.Limit, Offset: q.offset()})
	return wire.CostQueryRes(res), err
}

func (a *CostsAPI) purge(r *http.Request, body []byte) (any, error) {
	projectID, ids, err := decodePurge(r, body, true, purgeCostsMsg, a.limits)
	if err != nil {
		return nil, err
	}
	if err := a.store.PurgePrices(r.Context(), projectID, ids); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
