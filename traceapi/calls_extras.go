package traceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// CallExtras is where include_costs and include_feedback read from. A nil
// field turns that option into a no-op.
type CallExtras struct {
	Feedback interface {
		FeedbackForRefs(ctx context.Context, projectID string, refs []string) (map[string]json.RawMessage, error)
	}
	Prices interface {
		ProjectPrices(ctx context.Context, projectID string, llmIDs []string) ([]pricing.Price, error)
		AllProjectPrices(ctx context.Context, projectID string) ([]pricing.Price, error)
	}
	// Defaults is the shipped (or configured) price table.
	Defaults *pricing.Table
	// Refs resolves expand_columns.
	Refs RefReader
	// Users resolves include_usernames.
	Users UserNames
	// Retention is how long a call of a project that started at the given
	// time is kept from its start, for expire_at; nil or 0 keeps it.
	Retention func(projectID string, start time.Time) time.Duration
}

// extrasBatch is how many calls share one feedback and one price lookup.
const extrasBatch = 100

// enricher computes summary.weave.costs and .feedback for a stream of
// calls of one project, batch by batch, caching prices per model.
type enricher struct {
	src            CallExtras
	q              storage.CallsQuery
	pricesByModel  map[string][]pricing.Price
	wantCosts      bool
	wantFeedback   bool
	emptyFeedback  json.RawMessage
	feedbackByCall map[string]json.RawMessage
	wantUsernames  bool
	usernames      map[string]string // wb_user_id -> user name
}

func newEnricher(src CallExtras, q storage.CallsQuery) *enricher {
	return &enricher{
		src: src, q: q, pricesByModel: map[string][]pricing.Price{},
		wantCosts:     q.IncludeCosts && (src.Prices != nil || src.Defaults != nil),
		wantFeedback:  q.IncludeFeedback && src.Feedback != nil,
		emptyFeedback: json.RawMessage("[]"),
		wantUsernames: q.IncludeUsernames && src.Users != nil,
	}
}

// active reports whether any extra that needs a lookup was asked for and
// can be served.
func (e *enricher) active() bool { return e.wantCosts || e.wantFeedback || e.wantUsernames }

func callRef(projectID, id string) string { return "weave:///" + projectID + "/call/" + id }

// extras returns, in order, the extras of a batch of calls.
func (e *enricher) extras(ctx context.Context, calls []storage.StoredCall) ([]wire.Extras, error) {
	out := make([]wire.Extras, len(calls))
	if e.wantFeedback {
		if err := e.loadFeedback(ctx, calls); err != nil {
			return nil, err
		}
	}
	if err := e.loadUsernames(ctx, calls); err != nil {
		return nil, err
	}
	for i, c := range calls {
		out[i] = e.base(c)
		if e.wantFeedback {
			out[i].Feedback = e.emptyFeedback
			if fb, ok := e.feedbackByCall[callRef(c.ProjectID, c.ID)]; ok {
				out[i].Feedback = fb
			}
		}
		if e.wantCosts {
			costs, err := e.costs(ctx, c)
			if err != nil {
				return nil, err
			}
			out[i].Costs = costs
		}
	}
	return out, nil
}

func (e *enricher) loadFeedback(ctx context.Context, calls []storage.StoredCall) error {
	refs := make([]string, len(calls))
	for i, c := range calls {
		refs[i] = callRef(c.ProjectID, c.ID)
	}
	m, err := e.src.Feedback.FeedbackForRefs(ctx, e.q.ProjectID, refs)
	if err != nil {
		return fmt.Errorf("include_feedback: %w", err)
	}
	e.feedbackByCall = m
	return nil
}

// costs prices one call's usage; models seen before reuse their prices.
func (e *enricher) costs(ctx context.Context, c storage.StoredCall) (json.RawMessage, error) {
	usage := pricing.Usage(c.Summary)
	if usage == nil {
		return nil, nil
	}
	ids := pricing.LLMIDs(usage)
	var missing []string
	for _, id := range ids {
		if _, ok := e.pricesByModel[id]; !ok {
			missing = append(missing, id)
		}
	}
	if err := e.loadPrices(ctx, missing); err != nil {
		return nil, err
	}
	var prices []pricing.Price
	for _, id := range ids {
		prices = append(prices, e.pricesByModel[id]...)
	}
	return pricing.Compute(usage, c.StartedAt, prices), nil
}

func (e *enricher) loadPrices(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var found []pricing.Price
	if e.src.Prices != nil {
		var err error
		if found, err = e.src.Prices.ProjectPrices(ctx, e.q.ProjectID, ids); err != nil {
			return fmt.Errorf("include_costs: %w", err)
		}
	}
	if e.src.Defaults != nil {
		found = append(found, e.src.Defaults.For(ids)...)
	}
	for _, id := range ids {
		e.pricesByModel[id] = nil
	}
	for _, p := range found {
		e.pricesByModel[p.LLMID] = append(e.pricesByModel[p.LLMID], p)
	}
	return nil
}
