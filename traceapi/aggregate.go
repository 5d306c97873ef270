package traceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// AggregateAPI serves /calls/aggregate: calls bucketed by start time, with
// counts, errors, latency quantiles, tokens and cost, for charts.
type AggregateAPI struct {
	calls    storage.CallsAggregator
	extras   CallExtras
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
}

// NewAggregateAPI builds the aggregate endpoint; extras' prices price the
// usage (Feedback, Refs and Users are not used).
func NewAggregateAPI(calls storage.CallsAggregator, extras CallExtras, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *AggregateAPI {
	o := applyOptions(opts)
	return &AggregateAPI{calls: calls, extras: extras, logger: logger, maxBytes: maxBodyBytes, limits: o.limits,
		budget: newReadBudget(o, logger)}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *AggregateAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /calls/aggregate", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.aggregate))))
}

// aggregateBucket is one bucket on the wire. Every bucket of the range is
// answered, empty ones with zeros and null latencies.
type aggregateBucket struct {
	Start            wire.Time                  `json:"start"`
	CallCount        int64                      `json:"call_count"`
	ErrorCount       int64                      `json:"error_count"`
	LatencyP50       *float64                   `json:"latency_p50_ms"`
	LatencyP95       *float64                   `json:"latency_p95_ms"`
	LatencyP99       *float64                   `json:"latency_p99_ms"`
	PromptTokens     int64                      `json:"prompt_tokens"`
	CompletionTokens int64                      `json:"completion_tokens"`
	TotalTokens      int64                      `json:"total_tokens"`
	Cost             float64                    `json:"cost"`
	Usage            map[string]json.RawMessage `json:"usage"`
}

func decodeAggregate(body []byte, lim querylang.Limits) (storage.CallsAggregateQuery, error) {
	var q storage.CallsAggregateQuery
	var filter wire.CallsFilter
	var query json.RawMessage
	var start, end wire.Time
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.Calls.ProjectID, "filter": &filter, "query": &query,
		"start": &start, "end": &end, "bucket_seconds": &q.BucketSeconds},
		"project_id", "start", "end", "bucket_seconds")
	if err != nil {
		return q, err
	}
	q.Calls.Filter, q.Start, q.End = filter.Storage(), start.UTC(), end.UTC()
	if err := q.Validate(); err != nil {
		return q, err
	}
	q.Calls.Where, err = lim.Parse(query)
	return q, err
}

func (a *AggregateAPI) aggregate(r *http.Request, body []byte) (any, error) {
	q, err := decodeAggregate(body, a.limits)
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), q.Calls.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	agg, err := a.calls.AggregateCalls(r.Context(), q)
	if err != nil {
		return nil, err
	}
	buckets, err := a.fill(r.Context(), q, agg)
	if err != nil {
		return nil, err
	}
	return map[string]any{"bucket_seconds": q.BucketSeconds, "buckets": buckets}, nil
}

// fill lays the answer over every bucket of the range and prices each
// bucket's usage as if one call at the bucket's start had used it all.
func (a *AggregateAPI) fill(ctx context.Context, q storage.CallsAggregateQuery, agg storage.CallsAggregate) ([]aggregateBucket, error) {
	width := time.Duration(q.BucketSeconds) * time.Second
	out := make([]aggregateBucket, 0, int(q.End.Sub(q.Start)/width)+1)
	index := map[int64]int{}
	for t := q.Start; t.Before(q.End); t = t.Add(width) {
		index[t.UnixMilli()] = len(out)
		out = append(out, aggregateBucket{Start: wire.Time{Time: t}, Usage: map[string]json.RawMessage{}})
	}
	for _, b := range agg.Buckets {
		i, ok := index[b.Start.UnixMilli()]
		if !ok {
			return nil, fmt.Errorf("the store answered a bucket at %v, outside the range", b.Start)
		}
		o := &out[i]
		o.CallCount, o.ErrorCount = b.CallCount, b.ErrorCount
		o.LatencyP50, o.LatencyP95, o.LatencyP99 = b.LatencyP50, b.LatencyP95, b.LatencyP99
	}
	prices := newEnricher(a.extras, storage.CallsQuery{ProjectID: q.Calls.ProjectID, IncludeCosts: true})
	for _, u := range agg.Usage {
		i, ok := index[u.Start.UnixMilli()]
		if !ok {
			return nil, fmt.Errorf("the store answered usage at %v, outside the range", u.Start)
		}
		o := &out[i]
		o.PromptTokens += u.PromptTokens
		o.CompletionTokens += u.CompletionTokens
		o.TotalTokens += u.TotalTokens
		entry, cost, err := priceUsage(ctx, prices, u)
		if err != nil {
			return nil, err
		}
		o.Usage[u.Model], o.Cost = entry, o.Cost+cost
	}
	return out, nil
}

// priceUsage renders one model's bucket usage as a summary.usage entry and
// its cost at the model's price (0 without one).
func priceUsage(ctx context.Context, e *enricher, u storage.ModelUsageBucket) (json.RawMessage, float64, error) {
	counts := map[string]int64{"requests": u.Requests, "prompt_tokens": u.PromptTokens,
		"completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	entry, err := json.Marshal(counts)
	if err != nil || !e.wantCosts {
		return entry, 0, err
	}
	c, _, err := modelCost(ctx, e, u.Model, u.Start, counts)
	if err != nil {
		return nil, 0, err
	}
	return entry, c.PromptTokensTotalCost + c.CompletionTokensTotalCost, nil
}

// modelCost prices one model's usage counts (a summary.usage entry) for a
// call started at at, with the project's prices and the defaults; ok is
// false when the model has no price.
func modelCost(ctx context.Context, e *enricher, model string, at time.Time, counts map[string]int64) (pricing.Cost, bool, error) {
	if _, ok := e.pricesByModel[model]; !ok {
		if err := e.loadPrices(ctx, []string{model}); err != nil {
			return pricing.Cost{}, false, err
		}
	}
	usage, err := json.Marshal(map[string]map[string]int64{model: counts})
	if err != nil {
		return pricing.Cost{}, false, err
	}
	var c map[string]pricing.Cost
	if costs := pricing.Compute(usage, at, e.pricesByModel[model]); json.Unmarshal(costs, &c) != nil {
		return pricing.Cost{}, false, nil // no price for the model
	}
	cost, ok := c[model]
	return cost, ok, nil
}
