package traceapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/traceapi"
)

// statsEpoch is 10:00 UTC, 05:00 in New York and 15:30 in Kolkata.
func statsEpoch() time.Time { return time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) }

// newStatsEnv serves /calls/stats (and the cost endpoints, for project
// prices) over a real DuckDB store.
func newStatsEnv(t *testing.T) *storeEnv {
	t.Helper()
	e := newStoreEnv(t)
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), e.caller)))
		})
	}
	traceapi.NewCallStatsAPI(e.store, traceapi.CallExtras{Prices: e.store}, testMaxBody, slog.New(slog.DiscardHandler)).Register(e.mux, wrap)
	return e
}

// writeStatsCall stores a call of acme/p started at statsEpoch()+at,
// lasting dur (running when dur < 0).
func writeStatsCall(t *testing.T, e *storeEnv, id, op string, at, dur time.Duration, failed bool, summary string) {
	t.Helper()
	c := storage.Call{ProjectID: "acme/p", ID: id, TraceID: "t-" + id, OpName: op, StartedAt: statsEpoch().Add(at),
		Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(summary)}
	kind := storage.PartStart
	if dur >= 0 {
		end := c.StartedAt.Add(dur)
		c.EndedAt, kind = &end, storage.PartComplete
	}
	if failed {
		msg := "boom"
		c.Exception = &msg
	}
	if _, err := e.store.WriteCallOps(context.Background(), []storage.CallOp{{Part: &storage.CallPart{Kind: kind, Call: c}}}); err != nil {
		t.Fatal(err)
	}
}

// stats posts a /calls/stats request for acme/p and expects 200.
func stats(t *testing.T, e *storeEnv, body map[string]any) map[string]any {
	t.Helper()
	body["project_id"] = "acme/p"
	return e.expectStatus(t, "/calls/stats", body, http.StatusOK)
}

func buckets(t *testing.T, out map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := out[key].([]any)
	if !ok {
		t.Fatalf("%s = %v, want a list", key, out[key])
	}
	rows := make([]map[string]any, len(raw))
	for i, r := range raw {
		rows[i] = r.(map[string]any)
	}
	return rows
}

// same reports whether a decoded JSON value is want: nil for null, a
// number within a millionth, or equal.
func same(got, want any) bool {
	if w, ok := want.(float64); ok {
		g, ok := got.(float64)
		return ok && math.Abs(g-w) < 1e-6
	}
	return got == want
}

func checkBucket(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: keys %v, want %v", what, got, want)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !same(g, w) {
			t.Errorf("%s: %s = %v, want %v", what, k, g, w)
		}
	}
}

func writeStatsFixture(t *testing.T, e *storeEnv) {
	t.Helper()
	usage := `{"usage":{"m-test":{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"cache_read_input_tokens":20},` +
		`"claude":{"input_tokens":7,"output_tokens":3}}}`
	writeStatsCall(t, e, "a", "chat", 5*time.Minute, 100*time.Millisecond, false, usage)
	writeStatsCall(t, e, "b", "tool", 10*time.Minute, 200*time.Millisecond, true, `{}`)
	writeStatsCall(t, e, "c", "chat", 20*time.Minute, 300*time.Millisecond, false, `{"usage":{"m-test":{"prompt_tokens":10}}}`)
	writeStatsCall(t, e, "d", "chat", 30*time.Minute, -1, false, `{}`) // still running
	writeStatsCall(t, e, "e", "chat", 2*time.Hour+time.Minute, time.Second, true, `{}`)
	writeStatsCall(t, e, "f", "chat", -time.Minute, time.Second, false, `{}`) // before the range
}

// TestCallStatsShapes: every bucket of the range, empty ones too, names
// its figures "{agg}_{metric}" and "p{p}_{metric}" then "count"; usage
// buckets are every bucket times every model with usage, costs priced
// with the project's prices.
func TestCallStatsShapes(t *testing.T) {
	e := newStatsEnv(t)
	e.expectStatus(t, "/cost/create", `{"project_id":"acme/p","costs":{"m-test":{"prompt_token_cost":0.001,
		"completion_token_cost":0.002,"cache_read_input_token_cost":0.0001,"effective_date":"2024-01-01T00:00:00Z"}}}`, http.StatusOK)
	writeStatsFixture(t, e)
	out := stats(t, e, map[string]any{"start": "2025-03-04T10:00:00Z", "end": "2025-03-04T13:00:00Z", "granularity": 3600,
		"call_metrics": []any{
			map[string]any{"metric": "call_count"},
			map[string]any{"metric": "error_count", "aggregations": []string{"sum", "avg", "max"}},
			map[string]any{"metric": "latency_ms", "aggregations": []string{"avg", "min", "max", "count"}, "percentiles": []float64{50, 99.9}},
		},
		"usage_metrics": []any{
			map[string]any{"metric": "input_tokens"},
			map[string]any{"metric": "cache_read_input_tokens", "aggregations": []string{"sum", "avg"}},
			map[string]any{"metric": "total_cost"},
		}})
	if out["granularity"] != 3600.0 || out["timezone"] != "UTC" || out["start"] != "2025-03-04T10:00:00Z" || out["end"] != "2025-03-04T13:00:00Z" {
		t.Errorf("resolved %v %v %v %v, want 3600 UTC and the range", out["granularity"], out["timezone"], out["start"], out["end"])
	}
	calls := buckets(t, out, "call_buckets")
	if len(calls) != 3 {
		t.Fatalf("call buckets = %v, want 3 hours", calls)
	}
	// Hour 0: a, b, c ended (100, 200, 300 ms), d runs; b failed.
	checkBucket(t, "hour 0", calls[0], map[string]any{"timestamp": "2025-03-04T10:00:00+00:00", "sum_call_count": 4.0,
		"sum_error_count": 1.0, "avg_error_count": 0.25, "max_error_count": 1.0,
		"avg_latency_ms": 200.0, "min_latency_ms": 100.0, "max_latency_ms": 300.0, "count_latency_ms": 3.0,
		"p50_latency_ms": 200.0, "p99.9_latency_ms": 299.8, "count": 4.0})
	checkBucket(t, "hour 1 (empty)", calls[1], map[string]any{"timestamp": "2025-03-04T11:00:00+00:00", "sum_call_count": 0.0,
		"sum_error_count": 0.0, "avg_error_count": 0.0, "max_error_count": nil,
		"avg_latency_ms": 0.0, "min_latency_ms": nil, "max_latency_ms": nil, "count_latency_ms": 0.0,
		"p50_latency_ms": nil, "p99.9_latency_ms": nil, "count": 0.0})
	if calls[2]["sum_error_count"] != 1.0 || calls[2]["max_latency_ms"] != 1000.0 {
		t.Errorf("hour 2 = %v, want e's error and 1000 ms", calls[2])
	}

	usage := buckets(t, out, "usage_buckets")
	if len(usage) != 6 {
		t.Fatalf("usage buckets = %v, want 3 hours x 2 models", usage)
	}
	// total_cost sums input_tokens (already asked) and output_tokens
	// (added); m-test's input is billed less its cached 20 tokens.
	checkBucket(t, "hour 0 m-test", usage[1], map[string]any{"timestamp": "2025-03-04T10:00:00+00:00", "model": "m-test",
		"sum_input_tokens": 110.0, "sum_cache_read_input_tokens": 20.0, "avg_cache_read_input_tokens": 10.0,
		"sum_output_tokens": 50.0, "count": 2.0, "sum_total_cost": 90*0.001 + 50*0.002 + 20*0.0001})
	checkBucket(t, "hour 0 claude", usage[0], map[string]any{"timestamp": "2025-03-04T10:00:00+00:00", "model": "claude",
		"sum_input_tokens": 7.0, "sum_cache_read_input_tokens": 0.0, "avg_cache_read_input_tokens": 0.0,
		"sum_output_tokens": 3.0, "count": 1.0, "sum_total_cost": 0.0})
	checkBucket(t, "hour 1 m-test", usage[3], map[string]any{"timestamp": "2025-03-04T11:00:00+00:00", "model": "m-test",
		"sum_input_tokens": 0.0, "sum_cache_read_input_tokens": 0.0, "avg_cache_read_input_tokens": 0.0,
		"sum_output_tokens": 0.0, "count": 0.0, "sum_total_cost": 0.0})

	// The filter narrows both lists; a request without metrics has none.
	out = stats(t, e, map[string]any{"start": "2025-03-04T10:00:00Z", "end": "2025-03-04T13:00:00Z", "granularity": 3600,
		"filter": map[string]any{"op_names": []string{"tool"}}, "call_metrics": []any{map[string]any{"metric": "call_count"}},
		"usage_metrics": []any{map[string]any{"metric": "output_tokens"}}})
	if calls := buckets(t, out, "call_buckets"); calls[0]["sum_call_count"] != 1.0 || len(buckets(t, out, "usage_buckets")) != 0 {
		t.Errorf("op tool: calls %v usage %v, want b alone and no usage", calls, out["usage_buckets"])
	}
	out = stats(t, e, map[string]any{"start": "2025-03-04T10:00:00Z", "end": "2025-03-04T13:00:00Z"})
	if len(buckets(t, out, "call_buckets")) != 0 || len(buckets(t, out, "usage_buckets")) != 0 {
		t.Errorf("no metrics: %v, want empty lists", out)
	}
}

// TestCallStatsKeysInRequestOrder: a bucket's keys follow the request's
// metrics, aggregations then percentiles, "count" last.
func TestCallStatsKeysInRequestOrder(t *testing.T) {
	e := newStatsEnv(t)
	writeStatsFixture(t, e)
	rec := e.do("/calls/stats", "application/json", strings.NewReader(`{"project_id":"acme/p","start":"2025-03-04T10:00:00Z",
		"end":"2025-03-04T11:00:00Z","granularity":3600,"call_metrics":[{"metric":"latency_ms","aggregations":["max","sum"],
		"percentiles":[95]},{"metric":"call_count","aggregations":[]}]}`))
	body := rec.Body.String()
	want := `{"timestamp":"2025-03-04T10:00:00+00:00","max_latency_ms":300,"sum_latency_ms":600,"p95_latency_ms":290,"sum_call_count":4,"count":4}`
	if rec.Code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("answer %d %s, want a bucket %s", rec.Code, body, want)
	}
}

// TestCallStatsGranularity: without one, the bucket size follows the
// range as the reference picks it; one that would make more than 10,000
// buckets is widened; an omitted end is now.
func TestCallStatsGranularity(t *testing.T) {
	e := newStatsEnv(t)
	start := statsEpoch()
	for _, c := range []struct {
		name  string
		span  time.Duration
		given int64
		want  float64
	}{
		{"2 hours", 2 * time.Hour, 0, 300},
		{"6 hours", 6 * time.Hour, 0, 3600},
		{"12 hours and a second", 12*time.Hour + time.Second, 0, 6 * 3600},
		{"3 days", 3 * 24 * time.Hour, 0, 6 * 3600},
		{"10 days", 10 * 24 * time.Hour, 0, 12 * 3600},
		{"20 days", 20 * 24 * time.Hour, 0, 86400},
		{"given", 6 * time.Hour, 60, 60},
		{"given, too fine", 30 * 24 * time.Hour, 1, 260}, // 2,592,000 s / 10,000 + 1
		{"given, exactly 10,000", 10_000 * time.Second, 1, 1},
	} {
		body := map[string]any{"start": start.Format(time.RFC3339), "end": start.Add(c.span).Format(time.RFC3339),
			"call_metrics": []any{map[string]any{"metric": "call_count"}}}
		if c.given > 0 {
			body["granularity"] = c.given
		}
		out := stats(t, e, body)
		if out["granularity"] != c.want {
			t.Errorf("%s: granularity %v, want %v", c.name, out["granularity"], c.want)
		}
		if n := len(buckets(t, out, "call_buckets")); n > 10_000 || float64(n) < c.span.Seconds()/c.want {
			t.Errorf("%s: %d buckets, want the range covered in at most 10,000", c.name, n)
		}
	}
	before := time.Now().UTC()
	out := stats(t, e, map[string]any{"start": before.Add(-time.Hour).Format(time.RFC3339Nano)})
	end, err := time.Parse(time.RFC3339Nano, out["end"].(string))
	if err != nil || end.Before(before.Truncate(time.Microsecond)) || end.After(time.Now().Add(time.Second)) || out["granularity"] != 300.0 {
		t.Errorf("no end: end %v granularity %v, want now and 300", out["end"], out["granularity"])
	}
}

// TestCallStatsTimeZones: buckets start at multiples of the granularity
// on the zone's clock and say so with its offset; each call counts in
// the bucket of its zone's day or hour.
func TestCallStatsTimeZones(t *testing.T) {
	e := newStatsEnv(t)
	// New York is UTC-5 in early March: 04:59 UTC is the 3rd there.
	writeStatsCall(t, e, "a", "chat", -5*time.Hour-time.Minute, time.Second, false, `{}`)
	writeStatsCall(t, e, "b", "chat", -5*time.Hour+time.Minute, time.Second, false, `{}`)
	writeStatsCall(t, e, "c", "chat", 20*time.Minute, time.Second, false, `{}`)
	writeStatsCall(t, e, "d", "chat", 40*time.Minute, time.Second, false, `{}`)
	count := []any{map[string]any{"metric": "call_count"}}
	for _, c := range []struct {
		zone, start, end string
		granularity      int
		want             [][2]any // timestamp, calls
	}{
		{"America/New_York", "2025-03-03T12:00:00Z", "2025-03-05T12:00:00Z", 86400, [][2]any{
			{"2025-03-03T00:00:00-05:00", 1.0}, {"2025-03-04T00:00:00-05:00", 3.0}, {"2025-03-05T00:00:00-05:00", 0.0}}},
		{"UTC", "2025-03-03T12:00:00Z", "2025-03-05T12:00:00Z", 86400, [][2]any{
			{"2025-03-03T00:00:00+00:00", 0.0}, {"2025-03-04T00:00:00+00:00", 4.0}, {"2025-03-05T00:00:00+00:00", 0.0}}},
		// Kolkata is UTC+5:30: hours there start at half past in UTC.
		{"Asia/Kolkata", "2025-03-04T10:00:00Z", "2025-03-04T11:00:00Z", 3600, [][2]any{
			{"2025-03-04T15:00:00+05:30", 1.0}, {"2025-03-04T16:00:00+05:30", 1.0}}},
	} {
		out := stats(t, e, map[string]any{"start": c.start, "end": c.end, "granularity": c.granularity, "timezone": c.zone, "call_metrics": count})
		got := buckets(t, out, "call_buckets")
		if out["timezone"] != c.zone || len(got) != len(c.want) {
			t.Errorf("%s: %v, want %d buckets", c.zone, out, len(c.want))
			continue
		}
		for i, w := range c.want {
			if got[i]["timestamp"] != w[0] || got[i]["sum_call_count"] != w[1] {
				t.Errorf("%s: bucket %d = %v, want %v with %v calls", c.zone, i, got[i], w[0], w[1])
			}
		}
	}
}

// TestCallStatsRefusals: bad requests are the reference's statuses with
// the field named, never a 500.
func TestCallStatsRefusals(t *testing.T) {
	e := newStatsEnv(t)
	for _, c := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"over 31 days", `{"start":"2025-01-01T00:00:00Z","end":"2025-02-01T00:00:01Z"}`, http.StatusBadRequest, "end: CallStatsReq date range cannot exceed 31 days"},
		{"end before start", `{"start":"2025-01-02T00:00:00Z","end":"2025-01-01T00:00:00Z"}`, http.StatusBadRequest, "end: CallStatsReq end must be after start"},
		{"unknown metric", `{"start":"2025-01-01T00:00:00Z","call_metrics":[{"metric":"tokens"}]}`, http.StatusUnprocessableEntity, "call_metrics.0.metric"},
		{"unknown usage metric", `{"start":"2025-01-01T00:00:00Z","usage_metrics":[{"metric":"input_tokens"},{"metric":"latency_ms"}]}`, http.StatusUnprocessableEntity, "usage_metrics.1.metric"},
		{"unknown aggregation", `{"start":"2025-01-01T00:00:00Z","call_metrics":[{"metric":"call_count","aggregations":["sum","median"]}]}`, http.StatusUnprocessableEntity, "call_metrics.0.aggregations.1"},
		{"percentile over 100", `{"start":"2025-01-01T00:00:00Z","call_metrics":[{"metric":"latency_ms","percentiles":[101]}]}`, http.StatusBadRequest, "call_metrics.0.percentiles.0"},
		{"usage minimum", `{"start":"2025-01-01T00:00:00Z","usage_metrics":[{"metric":"input_tokens","aggregations":["min"]}]}`, http.StatusBadRequest, "usage_metrics.0.aggregations.0"},
		{"bad time zone", `{"start":"2025-01-01T00:00:00Z","end":"2025-01-02T00:00:00Z","timezone":"Mars/Olympus"}`, http.StatusBadRequest, "timezone"},
		{"zero granularity", `{"start":"2025-01-01T00:00:00Z","end":"2025-01-02T00:00:00Z","granularity":0}`, http.StatusBadRequest, "granularity"},
		{"no start", `{"end":"2025-01-02T00:00:00Z"}`, http.StatusUnprocessableEntity, "start"},
		{"unknown field", `{"start":"2025-01-01T00:00:00Z","query":{}}`, http.StatusUnprocessableEntity, "query"},
	} {
		body := `{"project_id":"acme/p",` + strings.TrimPrefix(c.body, "{")
		code, out := e.postJSON(t, "/calls/stats", body)
		reason, _ := out["reason"].(string)
		if code != c.status || !strings.Contains(reason, c.field) {
			t.Errorf("%s: %d %v, want %d naming %q", c.name, code, out, c.status, c.field)
		}
	}
	e.caller = auth.Principal{KeyID: "k2", UserID: "user-2", Entity: "other", Role: auth.RoleMember}
	if code, out := e.postJSON(t, "/calls/stats", `{"project_id":"acme/p","start":"2025-01-01T00:00:00Z","end":"2025-01-02T00:00:00Z"}`); code != http.StatusForbidden {
		t.Errorf("another entity's project: %d %v, want 403", code, out)
	}
}
