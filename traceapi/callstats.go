package traceapi

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"
	_ "time/tzdata" // IANA zones for bucket alignment, wherever the server runs

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// CallStatsAPI serves /calls/stats: time-bucketed call metrics (latency,
// call and error counts) and per-model usage metrics (tokens, costs), as
// the reference's call_stats answers them, from the calls aggregator.
type CallStatsAPI struct {
	calls    storage.CallsAggregator
	extras   CallExtras
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
}

// NewCallStatsAPI builds the statistics endpoint; extras' prices price
// the cost metrics (Feedback, Refs and Users are not used).
func NewCallStatsAPI(calls storage.CallsAggregator, extras CallExtras, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *CallStatsAPI {
	o := applyOptions(opts)
	return &CallStatsAPI{calls: calls, extras: extras, logger: logger, maxBytes: maxBodyBytes, budget: newReadBudget(o, logger)}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *CallStatsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /calls/stats", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.stats))))
}

// maxStatsRange is the widest range /calls/stats answers.
const maxStatsRange = 31 * 24 * time.Hour

// statsRequest is CallStatsReq resolved: the range, the bucket grid and
// the metrics to compute.
type statsRequest struct {
	projectID   string
	filter      storage.CallsFilter
	start, end  time.Time
	granularity int64
	zone        string
	loc         *time.Location
	calls       []statsMetric
	usage       []statsMetric
	costs       costMetrics
}

// origin is where the first bucket starts (bucketOrigin).
func (r *statsRequest) origin() time.Time { return bucketOrigin(r.start, r.granularity, r.loc) }

// bucketStarts lists every bucket of the range, empty ones too, as the
// reference answers them.
func (r *statsRequest) bucketStarts() []time.Time {
	var out []time.Time
	width := time.Duration(r.granularity) * time.Second
	for t := r.origin(); t.Before(r.end); t = t.Add(width) {
		out = append(out, t)
	}
	return out
}

// timestamp renders a bucket's start on the zone's clock with its offset,
// as the reference's isoformat of a zoned datetime does.
func (r *statsRequest) timestamp(t time.Time) string {
	return t.In(r.loc).Format("2006-01-02T15:04:05-07:00")
}

func decodeCallStats(body []byte, now time.Time) (*statsRequest, error) {
	var (
		req              statsRequest
		filter           wire.CallsFilter
		start, end       wire.Time
		granularity      *int64
		usageIn, callsIn []metricSpecIn
	)
	req.zone = "UTC"
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.projectID, "start": &start, "end": &end,
		"granularity": &granularity, "usage_metrics": &usageIn, "call_metrics": &callsIn, "filter": &filter,
		"timezone": &req.zone}, "project_id", "start")
	if err != nil {
		return nil, err
	}
	if req.calls, err = callMetrics(callsIn); err != nil {
		return nil, err
	}
	if req.usage, req.costs, err = usageMetrics(usageIn); err != nil {
		return nil, err
	}
	req.filter, req.start, req.end = filter.Storage(), start.UTC(), end.UTC()
	if end.IsZero() {
		req.end = now.UTC()
	}
	if req.end.Before(req.start) {
		return nil, &wire.FieldError{Field: "end", Msg: "CallStatsReq end must be after start: send an end at or after start, or none for now"}
	}
	if req.end.Sub(req.start) > maxStatsRange {
		return nil, &wire.FieldError{Field: "end", Msg: fmt.Sprintf(
			"CallStatsReq date range cannot exceed 31 days: start %s and end %s are %.1f days apart; narrow them to at most 31",
			wire.FormatTime(req.start), wire.FormatTime(req.end), req.end.Sub(req.start).Hours()/24)}
	}
	if req.loc, err = time.LoadLocation(req.zone); err != nil || req.zone == "" || req.zone == "Local" {
		return nil, &wire.FieldError{Field: "timezone", Msg: fmt.Sprintf("%q is no IANA time zone: send a name such as UTC or America/New_York", req.zone)}
	}
	req.granularity = autoGranularity(req.end.Sub(req.start))
	if granularity != nil {
		if *granularity < 1 || *granularity > storage.MaxAggregateBucketSeconds {
			return nil, &wire.FieldError{Field: "granularity", Msg: fmt.Sprintf(
				"bucket size in seconds must be between 1 and %d, got %d; omit it to choose one from the range", storage.MaxAggregateBucketSeconds, *granularity)}
		}
		req.granularity = *granularity
	}
	req.granularity = capGranularity(req.granularity, req.end.Sub(req.start))
	return &req, nil
}

func (a *CallStatsAPI) stats(r *http.Request, body []byte) (any, error) {
	req, err := decodeCallStats(body, time.Now())
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), req.projectID, auth.Read); err != nil {
		return nil, err
	}
	var agg storage.CallsAggregate
	if (len(req.calls) > 0 || len(req.usage) > 0) && req.end.After(req.start) {
		if agg, err = a.calls.AggregateCalls(r.Context(), req.query()); err != nil {
			return nil, err
		}
	}
	starts := req.bucketStarts()
	out := map[string]any{"start": wire.Time{Time: req.start}, "end": wire.Time{Time: req.end},
		"granularity": req.granularity, "timezone": req.zone, "call_buckets": []any{}, "usage_buckets": []any{}}
	if len(req.calls) > 0 {
		if out["call_buckets"], err = req.callBuckets(starts, agg.Buckets); err != nil {
			return nil, err
		}
	}
	if len(req.usage) > 0 {
		prices := newEnricher(a.extras, storage.CallsQuery{ProjectID: req.projectID, IncludeCosts: true})
		if out["usage_buckets"], err = req.usageBuckets(r.Context(), prices, starts, agg.Usage); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// query is the aggregate the metrics read: every bucket of the range,
// with the latency percentiles asked for.
func (r *statsRequest) query() storage.CallsAggregateQuery {
	q := storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: r.projectID, Filter: r.filter},
		Start: r.start, End: r.end, Origin: r.origin(), BucketSeconds: r.granularity, MaxBuckets: storage.MaxStatsBuckets}
	for _, m := range r.calls {
		if m.name == "latency_ms" {
			for _, p := range m.percentiles {
				q.Quantiles = append(q.Quantiles, p.level)
			}
		}
	}
	return q
}

// bucketIndex maps each bucket start (unix ms) to its position.
func bucketIndex(starts []time.Time) map[int64]int {
	index := make(map[int64]int, len(starts))
	for i, t := range starts {
		index[t.UnixMilli()] = i
	}
	return index
}

// costOf prices one model's bucket usage as if one call at the bucket's
// start had used it all: pricing's rule, with cached input billed at the
// cache rates; 0 when the model has no price.
func costOf(ctx context.Context, e *enricher, u storage.ModelUsageBucket) (c bucketCost, err error) {
	if !e.wantCosts || u.PromptTokens == 0 && u.CompletionTokens == 0 && u.CacheReadInputTokens == 0 && u.CacheCreationInputTokens == 0 {
		return c, nil
	}
	pc, ok, err := modelCost(ctx, e, u.Model, u.Start, map[string]int64{"requests": u.Requests,
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens,
		"cache_read_input_tokens": u.CacheReadInputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens})
	if err != nil || !ok {
		return c, err
	}
	c.input, c.output = pc.PromptTokensTotalCost, pc.CompletionTokensTotalCost
	c.total = c.input + c.output + pc.CacheReadInputTokensTotalCost + pc.CacheCreationInputTokensTotalCost
	if math.IsNaN(c.total) || math.IsInf(c.total, 0) {
		return bucketCost{}, nil
	}
	return c, nil
}

// bucketCost is one model's cost in one bucket.
type bucketCost struct{ input, output, total float64 }
