package traceapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

var statsDay = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// storeFeedback writes rows straight to the store, so their created_at
// is known.
func (e *storeEnv) storeFeedback(t *testing.T, rows ...storage.Feedback) {
	t.Helper()
	if err := e.store.CreateFeedback(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
}

func statsRow(id, payload string, at time.Time) storage.Feedback {
	return storage.Feedback{ID: id, ProjectID: "acme/p", WeaveRef: noteCallRef, WBUserID: "user-1",
		FeedbackType: "wandb.runnable.judge", Payload: json.RawMessage(payload), CreatedAt: at}
}

func TestFeedbackStatsBuckets(t *testing.T) {
	e := newStoreEnv(t)
	e.storeFeedback(t,
		statsRow("a", `{"output":{"score":0.5,"passed":true}}`, statsDay.Add(10*time.Minute)),
		statsRow("b", `{"output":{"score":1.5,"passed":false}}`, statsDay.Add(20*time.Minute)),
		statsRow("c", `{"output":{"score":4,"passed":true}}`, statsDay.Add(2*time.Hour+5*time.Minute)))
	req := `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z","end":"2024-01-01T03:00:00Z","granularity":3600,
		"metrics":[{"json_path":"output.score","aggregations":["avg","max"],"percentiles":[50]},
		           {"json_path":"output.passed","value_type":"boolean"}]}`
	code, raw := e.postRaw(t, "/feedback/stats", req)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, raw)
	}
	var res struct {
		Granularity int64
		Timezone    string
		Buckets     []map[string]any
		WindowStats map[string]map[string]any `json:"window_stats"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.Granularity != 3600 || res.Timezone != "UTC" || len(res.Buckets) != 3 {
		t.Fatalf("granularity %d, timezone %q, %d buckets: %s", res.Granularity, res.Timezone, len(res.Buckets), raw)
	}
	want := []map[string]any{
		{"timestamp": "2024-01-01T00:00:00+00:00", "avg_output_score": 1.0, "max_output_score": 1.5, "p50_output_score": 1.0,
			"count_true_output_passed": 1.0, "count_false_output_passed": 1.0, "count": 2.0},
		// An empty bucket: sums and counts are 0, the rest null.
		{"timestamp": "2024-01-01T01:00:00+00:00", "avg_output_score": 0.0, "max_output_score": nil, "p50_output_score": nil,
			"count_true_output_passed": 0.0, "count_false_output_passed": 0.0, "count": 0.0},
		{"timestamp": "2024-01-01T02:00:00+00:00", "avg_output_score": 4.0, "max_output_score": 4.0, "p50_output_score": 4.0,
			"count_true_output_passed": 1.0, "count_false_output_passed": 0.0, "count": 1.0},
	}
	if !reflect.DeepEqual(res.Buckets, want) {
		t.Errorf("buckets\n got %v\nwant %v", res.Buckets, want)
	}
	wantWindow := map[string]map[string]any{
		"output_score":  {"avg": 2.0, "max": 4.0, "p50": 1.5},
		"output_passed": {"count_true": 2.0, "count_false": 1.0},
	}
	if !reflect.DeepEqual(res.WindowStats, wantWindow) {
		t.Errorf("window_stats %v, want %v", res.WindowStats, wantWindow)
	}
	// Keys keep the reference's order: timestamp, the statistics, count.
	first := string(raw[strings.Index(string(raw), `"buckets"`):])
	if !strings.Contains(first, `{"timestamp":"2024-01-01T00:00:00+00:00","avg_output_score":1,"max_output_score":1.5,`) ||
		!strings.Contains(first, `"count_false_output_passed":1,"count":2}`) {
		t.Errorf("bucket key order: %s", first)
	}
}

func TestFeedbackStatsGranularityAndTimezone(t *testing.T) {
	e := newStoreEnv(t)
	e.storeFeedback(t, statsRow("a", `{"score":1}`, statsDay.Add(time.Hour)))
	for _, tc := range []struct {
		name, body   string
		granularity  float64
		first        string
		bucketsAtMin int
	}{
		{"two hours is 5 minutes", `"end":"2024-01-01T02:00:00Z"`, 300, "2024-01-01T00:00:00+00:00", 24},
		{"two days is 6 hours", `"end":"2024-01-03T00:00:00Z"`, 21600, "2024-01-01T00:00:00+00:00", 8},
		{"a month is a day", `"end":"2024-01-31T00:00:00Z"`, 86400, "2024-01-01T00:00:00+00:00", 30},
		// Buckets align to local midnight: 19:00 the day before in New
		// York starts the 18:00 bucket.
		{"local alignment", `"end":"2024-01-03T00:00:00Z","timezone":"America/New_York"`, 21600, "2023-12-31T18:00:00-05:00", 9},
		// A width of no whole minutes aligns to the Unix epoch.
		{"too fine is widened", `"end":"2024-01-31T00:00:00Z","granularity":60`, 260, "2023-12-31T23:57:20+00:00", 9970},
	} {
		out := e.expectStatus(t, "/feedback/stats", `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z",`+tc.body+
			`,"metrics":[{"json_path":"score"}]}`, http.StatusOK)
		buckets := out["buckets"].([]any)
		if out["granularity"] != tc.granularity || len(buckets) < tc.bucketsAtMin ||
			buckets[0].(map[string]any)["timestamp"] != tc.first {
			t.Errorf("%s: granularity %v, %d buckets from %v", tc.name, out["granularity"], len(buckets), buckets[0].(map[string]any)["timestamp"])
		}
		var rows float64
		for _, b := range buckets {
			rows += b.(map[string]any)["count"].(float64)
		}
		if rows != 1 {
			t.Errorf("%s: buckets hold %v rows, want 1", tc.name, rows)
		}
	}
	out := e.expectStatus(t, "/feedback/stats", `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z","end":"2024-01-02T00:00:00Z"}`, http.StatusOK)
	if out["granularity"] != 3600.0 || len(out["buckets"].([]any)) != 0 || out["window_stats"] != nil {
		t.Errorf("no metrics: %v", out)
	}
}

func TestFeedbackStatsRejects(t *testing.T) {
	e := newStoreEnv(t)
	body := func(extra string) string {
		return `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z","end":"2024-01-02T00:00:00Z"` + extra + `}`
	}
	for _, tc := range []struct {
		name, path, body, reason string
		want                     int
	}{
		{"range over 31 days", "/feedback/stats", `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z","end":"2024-02-02T00:00:00Z"}`, "cannot exceed 31 days", 422},
		{"end before start", "/feedback/stats", `{"project_id":"acme/p","start":"2024-01-02T00:00:00Z","end":"2024-01-01T00:00:00Z"}`, "end must be after start", 422},
		{"no start", "/feedback/stats", `{"project_id":"acme/p"}`, "start", 422},
		{"unknown field", "/feedback/stats", body(`,"limit":3`), "unknown field", 422},
		{"path with a quote", "/feedback/stats", body(`,"metrics":[{"json_path":"a'b"}]`), "json_path may only contain", 400},
		{"empty path", "/feedback/stats", body(`,"metrics":[{"json_path":" "}]`), "cannot be empty", 400},
		{"value type", "/feedback/stats", body(`,"metrics":[{"json_path":"a","value_type":"text"}]`), "metrics[0].value_type", 422},
		{"aggregation", "/feedback/stats", body(`,"metrics":[{"json_path":"a","aggregations":["median"]}]`), "metrics[0].aggregations[0]", 422},
		{"categorical average", "/feedback/stats", body(`,"metrics":[{"json_path":"a","value_type":"categorical","aggregations":["avg"]}]`), "use count", 400},
		{"percentile", "/feedback/stats", body(`,"metrics":[{"json_path":"a","percentiles":[101]}]`), "between 0 and 100", 400},
		{"granularity", "/feedback/stats", body(`,"granularity":0`), "granularity", 400},
		{"timezone", "/feedback/stats", body(`,"timezone":"Mars/Olympus"`), "IANA", 400},
		{"other project", "/feedback/stats", `{"project_id":"other/p","start":"2024-01-01T00:00:00Z","end":"2024-01-02T00:00:00Z"}`, "", 403},
		{"schema sample limit", "/feedback/payload_schema", body(`,"sample_limit":5001`), "sample_limit", 422},
		{"schema range", "/feedback/payload_schema", `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z","end":"2024-03-01T00:00:00Z"}`, "31 days", 422},
	} {
		code, raw := e.postRaw(t, tc.path, tc.body)
		if code != tc.want || !strings.Contains(string(raw), tc.reason) {
			t.Errorf("%s: status %d (%s), want %d naming %q", tc.name, code, raw, tc.want, tc.reason)
		}
	}
}

func scorerRow(id, scorer string, at time.Time, extra string) storage.Feedback {
	f := statsRow(id, `{}`, at)
	runnable := "weave:///acme/p/op/" + scorer + ":abc"
	f.RunnableRef, f.Extra = &runnable, json.RawMessage(extra)
	return f
}

func TestFeedbackAggregate(t *testing.T) {
	e := newStoreEnv(t)
	e.storeFeedback(t,
		scorerRow("a", "tone", statsDay.Add(time.Minute), `{"scorer_tags":["rude"],"scorer_ratings":{"_rating_":0.2}}`),
		scorerRow("b", "tone", statsDay.Add(2*time.Minute), `{"scorer_ratings":{"_rating_":0.6}}`),
		scorerRow("c", "facts", statsDay.Add(3*time.Hour), `{"span_agent_name":"bot"}`))
	after, before := statsDay.UnixMilli(), statsDay.Add(6*time.Hour).UnixMilli()
	req := map[string]any{"project_id": "acme/p", "after_ms": after, "before_ms": before, "time_bucket_seconds": 3600,
		"group_by": []string{"scorer_id"}}
	code, raw := e.postRaw(t, "/feedback/aggregate", mustJSON(t, req))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, raw)
	}
	want := `{"time_bucket_seconds":3600,"after_ms":1704067200000,"before_ms":1704088800000,"buckets":[` +
		`{"time_bucket_start_ms":1704067200000,"group":{"scorer_id":"tone"},"total_count":2,"scored_count":2,` +
		`"tag_counts":{"rude":1},"rating_counts":{"_rating_":2},"rating_sums":{"_rating_":0.8}},` +
		`{"time_bucket_start_ms":1704078000000,"group":{"scorer_id":"facts"},"total_count":1,"scored_count":0,` +
		`"tag_counts":{},"rating_counts":{},"rating_sums":{}}]}`
	if strings.TrimSpace(string(raw)) != want {
		t.Errorf("aggregate\n got %s\nwant %s", raw, want)
	}
	// The all-time total may span more than 31 days; it is one bucket.
	out := e.expectStatus(t, "/feedback/aggregate", map[string]any{"project_id": "acme/p", "after_ms": 0, "before_ms": before}, http.StatusOK)
	buckets := out["buckets"].([]any)
	if out["time_bucket_seconds"] != nil || len(buckets) != 1 || buckets[0].(map[string]any)["total_count"] != 3.0 ||
		buckets[0].(map[string]any)["time_bucket_start_ms"] != nil {
		t.Errorf("all-time total: %v", out)
	}
	for _, tc := range []struct {
		name   string
		set    map[string]any
		reason string
		want   int
	}{
		{"empty range", map[string]any{"before_ms": after}, "before_ms must be greater than after_ms", 422},
		{"too many buckets", map[string]any{"time_bucket_seconds": 60}, "cannot exceed 256 buckets", 422},
		{"long and grouped", map[string]any{"after_ms": 0, "group_by": []string{"scorer_id"}}, "project-wide total", 422},
		{"long and filtered", map[string]any{"after_ms": 0, "tags": []string{"rude"}}, "project-wide total", 422},
		{"group by payload", map[string]any{"group_by": []string{"payload"}}, "group_by[0]", 422},
		{"span type", map[string]any{"span_types": []string{"call"}}, "span_types[0]", 422},
		{"rating", map[string]any{"rating_min": 2}, "rating_min", 422},
		{"negative", map[string]any{"after_ms": -1}, "after_ms", 422},
		{"zero bucket", map[string]any{"time_bucket_seconds": 0}, "time_bucket_seconds", 422},
		{"unknown", map[string]any{"limit": 1}, "unknown field", 422},
	} {
		body := map[string]any{"project_id": "acme/p", "after_ms": after, "before_ms": before}
		for k, v := range tc.set {
			body[k] = v
		}
		code, raw := e.postRaw(t, "/feedback/aggregate", mustJSON(t, body))
		if code != tc.want || !strings.Contains(string(raw), tc.reason) {
			t.Errorf("%s: status %d (%s), want %d naming %q", tc.name, code, raw, tc.want, tc.reason)
		}
	}
}

func TestFeedbackPayloadSchema(t *testing.T) {
	e := newStoreEnv(t)
	mon := func(f storage.Feedback, trigger string) storage.Feedback { f.TriggerRef = &trigger; return f }
	e.storeFeedback(t,
		mon(statsRow("a", `{"output":{"score":0.9,"passed":true,"label":"ok","n":null}}`, statsDay.Add(time.Minute)), "weave:///acme/p/object/m1:v1"),
		mon(statsRow("b", `{"output":{"score":1,"label":2},"items":[{"x":1}],"Low quality":{"confidence":0.5},"a.b":1}`, statsDay.Add(2*time.Minute)), "weave:///acme/p/object/m2:v1"),
		mon(statsRow("c", `{"other":"never sampled"}`, statsDay.Add(time.Second)), "weave:///acme/p/object/m1:v1"))
	out := e.expectStatus(t, "/feedback/payload_schema", `{"project_id":"acme/p","start":"2024-01-01T00:00:00Z","end":"2024-01-02T00:00:00Z"}`, http.StatusOK)
	want := []any{
		map[string]any{"json_path": "Low quality.confidence", "value_type": "numeric"},
		map[string]any{"json_path": "output.label", "value_type": "categorical"},
		map[string]any{"json_path": "output.n", "value_type": "boolean"},
		map[string]any{"json_path": "output.passed", "value_type": "boolean"},
		map[string]any{"json_path": "output.score", "value_type": "numeric"},
	}
	if !reflect.DeepEqual(out["paths"], want) {
		t.Errorf("paths\n got %v\nwant %v", out["paths"], want)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// postRaw posts a JSON body and returns the status and the raw answer.
func (e *storeEnv) postRaw(t *testing.T, path, body string) (int, []byte) {
	t.Helper()
	rec := e.do(path, "application/json", strings.NewReader(body))
	return rec.Code, rec.Body.Bytes()
}
