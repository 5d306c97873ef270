package traceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// Usage rollups (/trace/usage, /calls/usage): each call's summary.usage
// summed with that of all its descendants, per model, as the reference's
// trace view and calls table show them.
const (
	// defaultUsageLimit is the reference's default bound on the calls one
	// rollup reads; maxUsageLimit is Weft's ceiling on what a request may
	// ask for.
	defaultUsageLimit = 10_000
	maxUsageLimit     = 100_000
	// maxUsageCallIDs bounds the calls one /calls/usage request names.
	maxUsageCallIDs = 1_000
	// usageBatch is how many calls, or traces, one read of a rollup
	// names. Reads by a few ids are point reads (the embedded store
	// narrows them to the ids' time ranges, up to 16 of them); one read
	// naming fifty ids spread over months scans the project instead:
	// 700 ms on 10M calls, against 4 x 20 ms in batches.
	usageBatch = 16
	// usageReadsAtOnce is how many batches one request reads at once.
	usageReadsAtOnce = 2
)

// usageColumns are all a rollup reads of a call.
var usageColumns = []string{"id", "parent_id", "trace_id", "started_at", "ended_at", "summary"}

// modelUsage is LLMAggregatedUsage: one model's usage summed over a call
// and its descendants. Costs are pointers: null unless include_costs.
type modelUsage struct {
	Requests                          int64    `json:"requests"`
	PromptTokens                      int64    `json:"prompt_tokens"`
	CompletionTokens                  int64    `json:"completion_tokens"`
	TotalTokens                       int64    `json:"total_tokens"`
	CacheReadInputTokens              int64    `json:"cache_read_input_tokens"`
	CacheCreationInputTokens          int64    `json:"cache_creation_input_tokens"`
	PromptTokensTotalCost             *float64 `json:"prompt_tokens_total_cost"`
	CompletionTokensTotalCost         *float64 `json:"completion_tokens_total_cost"`
	CacheReadInputTokensTotalCost     *float64 `json:"cache_read_input_tokens_total_cost"`
	CacheCreationInputTokensTotalCost *float64 `json:"cache_creation_input_tokens_total_cost"`
}

// usageRes is TraceUsageRes and CallsUsageRes.
type usageRes struct {
	CallUsage         map[string]map[string]*modelUsage `json:"call_usage"`
	UnfinishedCallIDs []string                          `json:"unfinished_call_ids"`
}

// traceUsage answers /trace/usage: every call the filter and query match,
// each with its own usage plus that of its descendants among them.
func (a *API) traceUsage(r *http.Request, body []byte) (any, error) {
	var q storage.CallsQuery
	var filter wire.CallsFilter
	var query json.RawMessage
	limit := int64(defaultUsageLimit)
	includeCosts := false
	err := wire.DecodeTop(body, wire.Fields{
		"project_id": &q.ProjectID, "filter": &filter, "query": &query,
		"include_costs": &includeCosts, "limit": &limit,
	}, "project_id")
	if err != nil {
		return nil, err
	}
	if err := checkUsageLimit(limit); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	q.Filter = filter.Storage()
	if q.Where, err = a.limits.Parse(query); err != nil {
		return nil, err
	}
	calls, err := a.usageCalls(r.Context(), q, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(calls)) > limit {
		return nil, &wire.FieldError{Field: "limit",
			Msg: fmt.Sprintf("more than %d calls match; narrow the filter (for example to one trace_id) or raise limit up to %d", limit, maxUsageLimit)}
	}
	return a.rollUp(r.Context(), q.ProjectID, calls, nil, includeCosts)
}

// callsUsage answers /calls/usage: for each named call, its usage plus
// that of all its descendants. The calls' traces are read whole, in
// batches of at most limit calls; a trace larger than limit is an error,
// never a partial sum.
func (a *API) callsUsage(r *http.Request, body []byte) (any, error) {
	var projectID string
	var ids []string
	limit := int64(defaultUsageLimit)
	includeCosts := false
	err := wire.DecodeTop(body, wire.Fields{
		"project_id": &projectID, "call_ids": &ids, "include_costs": &includeCosts, "limit": &limit,
	}, "project_id", "call_ids")
	if err != nil {
		return nil, err
	}
	if len(ids) > maxUsageCallIDs {
		return nil, &wire.FieldError{Field: "call_ids", Msg: fmt.Sprintf("names %d calls; send at most %d per request", len(ids), maxUsageCallIDs)}
	}
	if err := checkUsageLimit(limit); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	ids = distinct(ids)
	res := &usageRes{CallUsage: map[string]map[string]*modelUsage{}, UnfinishedCallIDs: []string{}}
	if len(ids) == 0 {
		return res, nil
	}
	// Each batch of ids is read, then its traces, two batches at a time:
	// a read of a few ids mostly waits on the store's point lookups.
	chunks := slices.Collect(slices.Chunk(ids, usageBatch))
	parts := make([]*usageRes, len(chunks))
	g, ctx := errgroup.WithContext(r.Context())
	g.SetLimit(usageReadsAtOnce)
	for i, batch := range chunks {
		g.Go(func() (err error) {
			parts[i], err = a.usageOfCalls(ctx, projectID, batch, limit, includeCosts)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var unfinished []string
	for _, part := range parts {
		for id, u := range part.CallUsage {
			res.CallUsage[id] = u
		}
		unfinished = append(unfinished, part.UnfinishedCallIDs...)
	}
	res.UnfinishedCallIDs = append(res.UnfinishedCallIDs, distinct(unfinished)...)
	return res, nil
}

// usageOfCalls rolls up the usage of ids (at most usageBatch): their
// traces, then the traces' calls, in batches that fit limit.
func (a *API) usageOfCalls(ctx context.Context, projectID string, ids []string, limit int64, includeCosts bool) (*usageRes, error) {
	roots, err := a.usageCalls(ctx, storage.CallsQuery{ProjectID: projectID,
		Filter: storage.CallsFilter{CallIDs: ids}, Columns: []string{"id", "trace_id"}}, int64(len(ids)))
	if err != nil {
		return nil, err
	}
	traces := make([]string, len(roots))
	for i, c := range roots {
		traces[i] = c.TraceID
	}
	traces = distinct(traces)
	res := &usageRes{CallUsage: map[string]map[string]*modelUsage{}, UnfinishedCallIDs: []string{}}
	for len(traces) > 0 {
		n, err := a.rollUpTraces(ctx, projectID, traces, ids, limit, includeCosts, res)
		if err != nil {
			return nil, err
		}
		traces = traces[n:]
	}
	return res, nil
}

// rollUpTraces rolls up the usage of the first traces (at most
// usageBatch) that fit in limit calls, halving the batch until they do,
// into res; it returns how many traces it took.
func (a *API) rollUpTraces(ctx context.Context, projectID string, traces, wanted []string, limit int64, includeCosts bool, res *usageRes) (int, error) {
	batch := traces[:min(len(traces), usageBatch)]
	for {
		calls, err := a.usageCalls(ctx, storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{TraceIDs: batch}}, limit)
		if err != nil {
			return 0, err
		}
		if int64(len(calls)) <= limit {
			part, err := a.rollUp(ctx, projectID, calls, wanted, includeCosts)
			if err != nil {
				return 0, err
			}
			for id, u := range part.CallUsage {
				res.CallUsage[id] = u
			}
			res.UnfinishedCallIDs = append(res.UnfinishedCallIDs, part.UnfinishedCallIDs...)
			return len(batch), nil
		}
		if len(batch) == 1 {
			return 0, &wire.FieldError{Field: "limit",
				Msg: fmt.Sprintf("trace %s has more than %d calls; raise limit (up to %d) to sum it whole", batch[0], limit, maxUsageLimit)}
		}
		batch = batch[:len(batch)/2]
	}
}

// usageCalls reads at most limit+1 calls of q, so the caller can tell a
// result that fits from one that does not.
func (a *API) usageCalls(ctx context.Context, q storage.CallsQuery, limit int64) ([]storage.StoredCall, error) {
	if q.Columns == nil {
		q.Columns = usageColumns
	}
	q.SortBy, q.Limit = []storage.SortBy{}, limit+1
	var out []storage.StoredCall
	for c, err := range a.calls.QueryCalls(ctx, q) {
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// rollUp sums each call's usage with its descendants' among calls (a
// parent missing from calls ends the climb), and keeps the calls of
// wanted (all when nil). Calls whose rollup holds nothing are kept with
// an empty map, as the reference does.
func (a *API) rollUp(ctx context.Context, projectID string, calls []storage.StoredCall, wanted []string, includeCosts bool) (*usageRes, error) {
	en := newEnricher(a.extras, storage.CallsQuery{ProjectID: projectID, IncludeCosts: includeCosts})
	own := make(map[string]map[string]*modelUsage, len(calls))
	parent := make(map[string]string, len(calls))
	for _, c := range calls {
		u, err := callUsage(ctx, en, c, includeCosts)
		if err != nil {
			return nil, err
		}
		own[c.ID] = u
		if c.ParentID != "" {
			parent[c.ID] = c.ParentID
		}
	}
	total := make(map[string]map[string]*modelUsage, len(calls))
	for _, c := range calls {
		if total[c.ID] == nil {
			total[c.ID] = map[string]*modelUsage{}
		}
		// Add the call's own usage to it and each ancestor present; a
		// cycle in bad data stops at the first call seen twice.
		seen := map[string]bool{}
		for id, ok := c.ID, true; ok && !seen[id]; id, ok = parent[id] {
			if _, present := own[id]; !present {
				break
			}
			seen[id] = true
			if total[id] == nil {
				total[id] = map[string]*modelUsage{}
			}
			addUsage(total[id], own[c.ID], includeCosts)
		}
	}
	res := &usageRes{CallUsage: map[string]map[string]*modelUsage{}, UnfinishedCallIDs: []string{}}
	for _, c := range calls {
		if wanted != nil && !slices.Contains(wanted, c.ID) {
			continue
		}
		res.CallUsage[c.ID] = total[c.ID]
	}
	for _, c := range calls {
		if c.EndedAt == nil && (wanted == nil || inSubtree(c.ID, wanted, parent)) {
			res.UnfinishedCallIDs = append(res.UnfinishedCallIDs, c.ID)
		}
	}
	return res, nil
}

// inSubtree reports whether id is one of roots or descends from one.
func inSubtree(id string, roots []string, parent map[string]string) bool {
	seen := map[string]bool{}
	for ok := true; ok && !seen[id]; id, ok = parent[id] {
		if slices.Contains(roots, id) {
			return true
		}
		seen[id] = true
	}
	return false
}

// callUsage is one call's own usage per model, priced when includeCosts.
// Token names of either convention add up; a zero total_tokens is the
// sum of prompt and completion.
func callUsage(ctx context.Context, en *enricher, c storage.StoredCall, includeCosts bool) (map[string]*modelUsage, error) {
	raw := pricing.Usage(c.Summary)
	if raw == nil {
		return nil, nil
	}
	var byModel map[string]json.RawMessage
	if json.Unmarshal(raw, &byModel) != nil {
		return nil, nil
	}
	var costs map[string]pricing.Cost
	if includeCosts {
		priced, err := en.costs(ctx, c)
		if err != nil {
			return nil, err
		}
		if priced != nil {
			if err := json.Unmarshal(priced, &costs); err != nil {
				return nil, fmt.Errorf("usage costs: %w", err)
			}
		}
	}
	out := map[string]*modelUsage{}
	for model, v := range byModel {
		var t pricing.Tokens
		if !t.Parse(v) {
			continue
		}
		u := &modelUsage{Requests: t.Requests, PromptTokens: t.Prompt, CompletionTokens: t.Completion,
			TotalTokens: t.Total, CacheReadInputTokens: t.CacheRead, CacheCreationInputTokens: t.CacheCreation}
		if u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		if includeCosts {
			cost := costs[model]
			u.PromptTokensTotalCost, u.CompletionTokensTotalCost = ptr(cost.PromptTokensTotalCost), ptr(cost.CompletionTokensTotalCost)
			u.CacheReadInputTokensTotalCost = ptr(cost.CacheReadInputTokensTotalCost)
			u.CacheCreationInputTokensTotalCost = ptr(cost.CacheCreationInputTokensTotalCost)
		}
		if u.Requests != 0 || u.PromptTokens != 0 || u.CompletionTokens != 0 || u.TotalTokens != 0 ||
			u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 || (includeCosts && costs[model] != pricing.Cost{}) {
			out[model] = u
		}
	}
	return out, nil
}

// addUsage adds src's models into dst.
func addUsage(dst, src map[string]*modelUsage, includeCosts bool) {
	for model, u := range src {
		d := dst[model]
		if d == nil {
			d = &modelUsage{}
			if includeCosts {
				d.PromptTokensTotalCost, d.CompletionTokensTotalCost = ptr(0), ptr(0)
				d.CacheReadInputTokensTotalCost, d.CacheCreationInputTokensTotalCost = ptr(0), ptr(0)
			}
			dst[model] = d
		}
		d.Requests += u.Requests
		d.PromptTokens += u.PromptTokens
		d.CompletionTokens += u.CompletionTokens
		d.TotalTokens += u.TotalTokens
		d.CacheReadInputTokens += u.CacheReadInputTokens
		d.CacheCreationInputTokens += u.CacheCreationInputTokens
		if includeCosts {
			*d.PromptTokensTotalCost += *u.PromptTokensTotalCost
			*d.CompletionTokensTotalCost += *u.CompletionTokensTotalCost
			*d.CacheReadInputTokensTotalCost += *u.CacheReadInputTokensTotalCost
			*d.CacheCreationInputTokensTotalCost += *u.CacheCreationInputTokensTotalCost
		}
	}
}

func checkUsageLimit(limit int64) error {
	if limit < 1 || limit > maxUsageLimit {
		return &wire.FieldError{Field: "limit", Msg: fmt.Sprintf("is %d; it must be between 1 and %d", limit, maxUsageLimit)}
	}
	return nil
}

func ptr(f float64) *float64 { return &f }
