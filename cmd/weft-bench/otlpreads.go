package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// otlpRead is one read users make, its body built afresh for each
// repetition (a random call or trace where it reads one).
type otlpRead struct {
	name, path string
	body       func(rng *rand.Rand) map[string]any
}

// otlpReads times, over HTTP, the reads users make on the project the
// OTLP load just filled: a call, a trace, the first page in each
// documented order, the project's statistics, the charts and the web UI's
// pages; each o.queries times, printing p50, p99 and the slowest.
func otlpReads(ctx context.Context, t *target, o options, project string, pool textPool, transport string) error {
	requests := (o.calls + o.batch - 1) / o.batch
	// sent regenerates a random request's spans: the ids it carried.
	sent := func(rng *rand.Rand) ptrace.SpanSlice {
		i := rng.IntN(requests)
		n := min(o.batch, o.calls-i*o.batch)
		return llmSpans(spanRNG(i, transport), pool, project, n, o.traceSpans, time.Now()).Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	}
	firstPage := func(sort string, roots bool) func(*rand.Rand) map[string]any {
		return func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "filter": map[string]any{"trace_roots_only": roots},
				"sort_by": []map[string]string{{"field": sort, "direction": "desc"}}, "limit": 100}
		}
	}
	now := time.Now()
	var pageRoots []string // the UI calls page's roots, read once the load is readable
	reads := []otlpRead{
		{"call/read of a random call", "/call/read", func(rng *rand.Rand) map[string]any {
			spans := sent(rng)
			return map[string]any{"project_id": project, "id": spans.At(rng.IntN(spans.Len())).SpanID().String()}
		}},
		{fmt.Sprintf("a random trace by id (%d calls)", o.traceSpans), "/calls/stream_query", func(rng *rand.Rand) map[string]any {
			spans := sent(rng)
			return map[string]any{"project_id": project, "filter": map[string]any{"trace_ids": []string{spans.At(rng.IntN(spans.Len())).TraceID().String()}}}
		}},
		{"first page, by start", "/calls/stream_query", firstPage("started_at", false)},
		{"first page of roots, by start", "/calls/stream_query", firstPage("started_at", true)},
		{"first page, by latency", "/calls/stream_query", firstPage("summary.weave.latency_ms", false)},
		{"first page, by tokens", "/calls/stream_query", firstPage("summary.weave.total_tokens", false)},
		{"first page, by cost", "/calls/stream_query", firstPage("summary.weave.cost", false)},
		{"query_stats (whole project)", "/calls/query_stats", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project}
		}},
		{"charts: /calls/aggregate over 24 h", "/calls/aggregate", func(*rand.Rand) map[string]any {
			end := now.Truncate(24 * time.Minute).Add(24 * time.Minute)
			return map[string]any{"project_id": project, "start": end.Add(-24 * time.Hour).UTC().Format(time.RFC3339), "end": end.UTC().Format(time.RFC3339),
				"bucket_seconds": 1440, "filter": map[string]any{}}
		}},
		{"UI calls page: roots, 50, with costs", "/calls/stream_query", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "filter": map[string]any{"trace_roots_only": true},
				"sort_by": []map[string]string{{"field": "started_at", "direction": "desc"}}, "limit": 50, "include_costs": true,
				"columns": []string{"id", "trace_id", "parent_id", "op_name", "display_name", "started_at", "ended_at", "exception", "summary"}}
		}},
		{"UI calls page sorted by latency", "/calls/stream_query", uiSorted(project, "summary.weave.latency_ms")},
		{"UI calls page sorted by tokens", "/calls/stream_query", uiSorted(project, "summary.weave.total_tokens")},
		{"UI calls page: its count", "/calls/query_stats", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "filter": map[string]any{"trace_roots_only": true}}
		}},
		{"calls/usage of the UI calls page (50 roots)", "/calls/usage", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "call_ids": pageRoots, "include_costs": true}
		}},
		{"calls/usage of 50 random calls", "/calls/usage", func(rng *rand.Rand) map[string]any {
			ids := make([]string, 50)
			for i := range ids {
				spans := sent(rng)
				ids[i] = spans.At(rng.IntN(spans.Len())).SpanID().String()
			}
			return map[string]any{"project_id": project, "call_ids": ids, "include_costs": true}
		}},
		{"trace/usage of a random trace", "/trace/usage", func(rng *rand.Rand) map[string]any {
			spans := sent(rng)
			return map[string]any{"project_id": project, "filter": map[string]any{"trace_ids": []string{spans.At(rng.IntN(spans.Len())).TraceID().String()}}}
		}},
		{"calls/stats over 24 h (latency p50/p99, tokens, cost)", "/calls/stats", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "start": now.Add(-24 * time.Hour).UTC().Format(time.RFC3339),
				"call_metrics":  []map[string]any{{"metric": "call_count"}, {"metric": "latency_ms", "aggregations": []string{"avg"}, "percentiles": []float64{50, 99}}},
				"usage_metrics": []map[string]any{{"metric": "total_tokens"}, {"metric": "total_cost"}}}
		}},
		{"project/stats", "/project/stats", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project}
		}},
		{"UI threads page", "/threads/stream_query", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "limit": 200}
		}},
		{"UI objects page", "/objs/query", func(*rand.Rand) map[string]any {
			return map[string]any{"project_id": project, "filter": map[string]any{"latest_only": true}, "metadata_only": true,
				"sort_by": []map[string]string{{"field": "created_at", "direction": "desc"}}, "limit": 500}
		}},
	}
	// OTLP spans name no thread: the threads page lists none.
	mayBeEmpty := map[string]bool{"UI threads page": true}
	client := &http.Client{Timeout: 5 * time.Minute}
	if err := waitReadable(ctx, client, t, project, o.calls); err != nil {
		return err
	}
	var page struct {
		Calls []struct {
			ID string `json:"id"`
		} `json:"calls"`
	}
	pageBody, _ := json.Marshal(map[string]any{"project_id": project, "filter": map[string]any{"trace_roots_only": true},
		"sort_by": []map[string]string{{"field": "started_at", "direction": "desc"}}, "limit": 50, "columns": []string{"id"}})
	if err := postJSON(ctx, client, t, "/calls/query", pageBody, &page); err != nil {
		return fmt.Errorf("the UI calls page's roots: %w", err)
	}
	for _, c := range page.Calls {
		pageRoots = append(pageRoots, c.ID)
	}
	fmt.Printf("  reads over HTTP on %d stored spans, %d of each:\n", o.calls, o.queries)
	rng := rand.New(rand.NewPCG(7, 7))
	// A read that fails (a chart past the read budget, say) is reported
	// on its line and the others still run: a figure missing is itself
	// the finding.
	var failed []string
	for _, r := range reads {
		lats, err := timeRead(ctx, client, t, r.path, func() any { return r.body(rng) }, o.queries, mayBeEmpty[r.name])
		if err != nil {
			fmt.Printf("    %-42s failed: %v\n", r.name, err)
			failed = append(failed, r.name)
			continue
		}
		fmt.Printf("    %-42s p50 %9v  p99 %9v  max %9v\n", r.name, pct(lats, 50), pct(lats, 99), slices.Max(lats).Round(10*time.Microsecond))
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d reads failed: %s", len(failed), len(reads), strings.Join(failed, ", "))
	}
	return nil
}

// timeRead posts the bodies body makes to path n times and returns how
// long each answer took; an error or an empty answer (unless mayBeEmpty)
// ends it.
func timeRead(ctx context.Context, client *http.Client, t *target, path string, body func() any, n int, mayBeEmpty bool) ([]time.Duration, error) {
	var lats []time.Duration
	for range n {
		b, err := json.Marshal(body())
		if err != nil {
			return nil, err
		}
		d, size, err := timedPost(ctx, client, t, path, b)
		if err != nil {
			return nil, err
		}
		if size == 0 && !mayBeEmpty {
			return nil, errors.New("an empty body")
		}
		lats = append(lats, d)
	}
	return lats, nil
}

// waitReadable waits until the store serves all n spans of project: after
// a load, the log's backlog may still be on its way into the store, and a
// read waits for it (up to the read budget) to see every acknowledged
// write. It prints how long that took.
func waitReadable(ctx context.Context, client *http.Client, t *target, project string, n int) error {
	begin := time.Now()
	body, _ := json.Marshal(map[string]any{"project_id": project})
	for {
		var stats struct {
			Count int `json:"count"`
		}
		// A 503 while the backlog drains is expected: try again.
		err := postJSON(ctx, client, t, "/calls/query_stats", body, &stats)
		if err == nil && stats.Count >= n {
			fmt.Printf("  all %d spans readable %v after the load\n", n, time.Since(begin).Round(100*time.Millisecond))
			return nil
		}
		if time.Since(begin) > 30*time.Minute {
			return fmt.Errorf("after 30 minutes the store serves %d of %d spans (last error: %v)", stats.Count, n, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// uiSorted is the web UI's calls page (50 roots, the columns its table
// shows, with costs) sorted by field, highest first.
func uiSorted(project, field string) func(*rand.Rand) map[string]any {
	return func(*rand.Rand) map[string]any {
		return map[string]any{"project_id": project, "filter": map[string]any{"trace_roots_only": true},
			"sort_by": []map[string]string{{"field": field, "direction": "desc"}}, "limit": 50, "include_costs": true,
			"columns": []string{"id", "trace_id", "parent_id", "op_name", "display_name", "started_at", "ended_at", "exception", "summary"}}
	}
}
