package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// replay posts the request body of a recorded TypeScript client sample.
func replay(t *testing.T, e *env, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var sample struct {
		Request struct {
			URLPath string          `json:"url_path"`
			Body    json.RawMessage `json:"body"`
		} `json:"request"`
	}
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	e.ok(sample.Request.URLPath, []byte(sample.Request.Body), &res)
	return res
}

type callOut struct {
	ID          string          `json:"id"`
	ProjectID   string          `json:"project_id"`
	OpName      string          `json:"op_name"`
	DisplayName *string         `json:"display_name"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id"`
	StartedAt   string          `json:"started_at"`
	EndedAt     *string         `json:"ended_at"`
	Exception   *string         `json:"exception"`
	Output      json.RawMessage `json:"output"`
	Inputs      map[string]any  `json:"inputs"`
	Summary     struct {
		Usage map[string]map[string]float64 `json:"usage"`
		Weave struct {
			Status    string `json:"status"`
			TraceName string `json:"trace_name"`
			Display   string `json:"display_name"`
			LatencyMS *int64 `json:"latency_ms"`
		} `json:"weave"`
	} `json:"summary"`
}

func (e *env) stream(body map[string]any) []callOut {
	e.t.Helper()
	status, hdr, out := e.do(http.MethodPost, "/calls/stream_query", e.member, body)
	if status != http.StatusOK {
		e.t.Fatalf("stream_query = %d: %s", status, out)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/jsonl" {
		e.t.Fatalf("content type %q", ct)
	}
	var calls []callOut
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c callOut
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			e.t.Fatalf("line %q: %v", sc.Text(), err)
		}
		calls = append(calls, c)
	}
	return calls
}

func byOp(calls []callOut) map[string]callOut {
	m := map[string]callOut{}
	for _, c := range calls {
		m[c.Summary.Weave.TraceName+c.Summary.Weave.Display] = c
	}
	return m
}

func TestTypeScriptSamplesRoundTrip(t *testing.T) {
	e := newEnv(t)
	res := replay(t, e, "05-call-upsert-batch-nested-and-exception.json")
	if items, _ := res["res"].([]any); len(items) != 8 {
		t.Fatalf("upsert_batch answered %v, want 8 entries", res)
	}
	replay(t, e, "06-call-upsert-batch-usage-image-rename.json")
	calls := e.stream(map[string]any{"project_id": "acme/demo"})
	if len(calls) < 8 {
		t.Fatalf("got %d calls", len(calls))
	}
	ops := byOp(calls)
	boom, pipeline := ops["boom"], ops["pipeline"]
	var add callOut
	for _, c := range calls {
		if c.Summary.Weave.TraceName == "add" && c.ParentID != nil && *c.ParentID == pipeline.ID {
			add = c
		}
	}
	if boom.Summary.Weave.Status != "error" || boom.Exception == nil || string(boom.Output) != "null" {
		t.Fatalf("boom = %+v", boom)
	}
	if add.ParentID == nil || *add.ParentID != pipeline.ID || add.TraceID != pipeline.TraceID {
		t.Fatalf("add not linked to pipeline: add=%+v pipeline=%+v", add, pipeline)
	}
	if add.Summary.Weave.Status != "success" || add.Summary.Weave.LatencyMS == nil || string(add.Output) != "4" {
		t.Fatalf("add = %+v", add)
	}
	for _, c := range calls {
		if c.ProjectID != "acme/demo" || c.StartedAt == "" || !strings.HasSuffix(c.StartedAt, "Z") {
			t.Fatalf("call %+v has bad project or time", c)
		}
	}
	var withUsage int
	for _, c := range calls {
		if len(c.Summary.Usage) > 0 {
			withUsage++
		}
	}
	if withUsage == 0 {
		t.Fatal("no call kept summary.usage from sample 06")
	}
}

func startBody(id, parent, op, at string) map[string]any {
	s := map[string]any{"project_id": "acme/app", "op_name": op, "started_at": at, "attributes": map[string]any{}, "inputs": map[string]any{"q": "hi " + id}}
	if id != "" {
		s["id"], s["trace_id"] = id, "trace-1"
	}
	if parent != "" {
		s["parent_id"] = parent
	}
	return s
}

func TestSingleCallEndpoints(t *testing.T) {
	e := newEnv(t)
	var started struct {
		ID      string `json:"id"`
		TraceID string `json:"trace_id"`
	}
	e.ok("/call/start", map[string]any{"start": startBody("", "", "gen-ids", "2025-01-01T00:00:00Z")}, &started)
	if started.ID == "" || started.TraceID == "" {
		t.Fatalf("generated ids missing: %+v", started)
	}
	e.ok("/call/end", map[string]any{"end": map[string]any{"project_id": "acme/app", "id": started.ID,
		"ended_at": "2025-01-01T00:00:02Z", "output": "done", "summary": map[string]any{}}}, nil)
	var read struct{ Call *callOut }
	e.ok("/call/read", map[string]any{"project_id": "acme/app", "id": started.ID}, &read)
	if read.Call == nil || *read.Call.EndedAt != "2025-01-01T00:00:02Z" || *read.Call.Summary.Weave.LatencyMS != 2000 {
		t.Fatalf("read = %+v", read.Call)
	}
	e.ok("/call/read", map[string]any{"project_id": "acme/app", "id": "nope"}, &read)
	if read.Call != nil {
		t.Fatalf("unknown call read = %+v, want null", read.Call)
	}
	e.ok("/call/update", map[string]any{"project_id": "acme/app", "call_id": started.ID, "display_name": "nice"}, nil)
	e.ok("/call/read", map[string]any{"project_id": "acme/app", "id": started.ID}, &read)
	if read.Call.DisplayName == nil || *read.Call.DisplayName != "nice" || read.Call.Summary.Weave.Display != "nice" {
		t.Fatalf("after update: %+v", read.Call)
	}
}

func TestV2CallsComplete(t *testing.T) {
	e := newEnv(t)
	item := startBody("c1", "", "weave:///acme/app/op/llm:d1", "2025-01-01T00:00:00.5Z")
	item["ended_at"], item["output"], item["summary"] = "2025-01-01T00:00:01Z", map[string]any{"a": 1}, nil
	e.ok("/v2/acme/app/calls/complete", map[string]any{"batch": []any{item}}, nil)
	e.ok("/v2/acme/app/call/start", map[string]any{"start": startBody("c2", "c1", "eager", "2025-01-01T00:00:00.6Z")}, nil)
	e.ok("/v2/acme/app/call/end", map[string]any{"end": map[string]any{"project_id": "acme/app", "id": "c2", "ended_at": "2025-01-01T00:00:00.9Z", "summary": map[string]any{"status_counts": map[string]int{"error": 1}}}}, nil)
	calls := byOp(e.stream(map[string]any{"project_id": "acme/app"}))
	if c := calls["llm"]; c.Summary.Weave.Status != "success" || c.Summary.Weave.TraceName != "llm" {
		t.Fatalf("complete call = %+v", c)
	}
	if c := calls["eager"]; c.Summary.Weave.Status != "descendant_error" {
		t.Fatalf("eager call = %+v", c)
	}
	status, _, body := e.do(http.MethodPost, "/v2/acme/other/calls/complete", e.member, map[string]any{"batch": []any{item}})
	if status != http.StatusBadRequest || !strings.Contains(string(body), "URL path") {
		t.Fatalf("path/body project mismatch = %d %s", status, body)
	}
}

func TestDeleteAndStats(t *testing.T) {
	e := newEnv(t)
	batch := []any{}
	for i, parent := range []string{"", "c0", "c1", ""} {
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": startBody(fmt.Sprintf("c%d", i), parent, "op", "2025-01-01T00:00:00Z")}})
	}
	e.ok("/call/upsert_batch", map[string]any{"batch": batch}, nil)
	var stats struct {
		Count   int  `json:"count"`
		HasMore bool `json:"has_more"`
	}
	e.ok("/calls/query_stats", map[string]any{"project_id": "acme/app", "limit": 2}, &stats)
	if stats.Count != 2 || !stats.HasMore {
		t.Fatalf("stats with limit = %+v", stats)
	}
	var del struct {
		NumDeleted int `json:"num_deleted"`
	}
	e.ok("/calls/delete", map[string]any{"project_id": "acme/app", "call_ids": []string{"c0"}}, &del)
	if del.NumDeleted != 3 {
		t.Fatalf("num_deleted = %d, want 3", del.NumDeleted)
	}
	e.ok("/calls/query_stats", map[string]any{"project_id": "acme/app"}, &stats)
	if stats.Count != 1 || stats.HasMore {
		t.Fatalf("stats after delete = %+v", stats)
	}
}

func TestBadInputAnswers(t *testing.T) {
	e := newEnv(t)
	tooMany := make([]string, 1001)
	tests := []struct {
		name, path string
		body       any
		want       int
		contains   string
	}{
		{"not json", "/call/upsert_batch", `{"batch":`, 422, "not valid JSON"},
		{"unknown top-level key", "/calls/stream_query", map[string]any{"project_id": "acme/app", "filtr": map[string]any{}}, 422, "filtr"},
		{"missing required", "/call/start", map[string]any{}, 422, "start"},
		{"wrong type", "/calls/stream_query", map[string]any{"project_id": "acme/app", "limit": "ten"}, 422, "limit"},
		{"bad mode", "/call/upsert_batch", map[string]any{"batch": []any{map[string]any{"mode": "middle", "req": map[string]any{}}}}, 422, "batch[0].mode"},
		{"start without op", "/call/upsert_batch", map[string]any{"batch": []any{map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{"project_id": "acme/app", "started_at": "2025-01-01T00:00:00Z"}}}}}, 422, "op_name"},
		{"bad datetime", "/call/start", map[string]any{"start": map[string]any{"project_id": "acme/app", "op_name": "o", "started_at": "noon"}}, 422, "started_at"},
		{"update without name", "/call/update", map[string]any{"project_id": "acme/app", "call_id": "x"}, 400, "display_name"},
		{"delete too many", "/calls/delete", map[string]any{"project_id": "acme/app", "call_ids": tooMany}, 413, "1000"},
		{"stats limit zero", "/calls/query_stats", map[string]any{"project_id": "acme/app", "limit": 0}, 400, "limit"},
		{"bad sort direction", "/calls/stream_query", map[string]any{"project_id": "acme/app", "sort_by": []any{map[string]any{"field": "started_at", "direction": "sideways"}}}, 422, "direction"},
		{"unknown query op", "/calls/stream_query", map[string]any{"project_id": "acme/app", "query": map[string]any{"$expr": map[string]any{"$like": []any{}}}}, 422, "$like"},
		{"negative limit", "/calls/stream_query", map[string]any{"project_id": "acme/app", "limit": -1}, 400, "limit: must be 0 or more"},
		{"negative offset", "/calls/query", map[string]any{"project_id": "acme/app", "offset": -5}, 400, "offset: must be 0 or more"},
		{"objs negative limit", "/objs/query", map[string]any{"project_id": "acme/app", "limit": -1}, 400, "limit"},
		{"table negative offset", "/table/query", map[string]any{"project_id": "acme/app", "digest": "d", "offset": -5}, 400, "offset"},
		{"threads negative limit", "/threads/stream_query", map[string]any{"project_id": "acme/app", "limit": -1}, 400, "limit"},
		{"feedback negative offset", "/feedback/query", map[string]any{"project_id": "acme/app", "offset": -5}, 400, "offset"},
		{"number as datetime", "/call/start", map[string]any{"start": map[string]any{"project_id": "acme/app", "op_name": "o", "started_at": 1}}, 422, "start.started_at: expected an ISO-8601 datetime"},
		{"number as end datetime", "/call/end", map[string]any{"end": map[string]any{"project_id": "acme/app", "id": "c", "ended_at": 1735787045.5}}, 422, "end.ended_at"},
		{"otel_dump not an object", "/call/start", map[string]any{"start": map[string]any{"project_id": "acme/app", "op_name": "o", "started_at": "2025-01-01T00:00:00Z", "otel_dump": "span"}}, 422, "start.otel_dump: must be a JSON object"},
		{"unknown field in query", "/calls/query_stats", map[string]any{"project_id": "acme/app", "query": map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "nosuch"}, map[string]any{"$literal": 1}}}}}, 422, "nosuch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.do(http.MethodPost, tc.path, e.member, tc.body)
			if status != tc.want || !strings.Contains(string(body), tc.contains) {
				t.Fatalf("status %d body %s; want %d containing %q", status, body, tc.want, tc.contains)
			}
		})
	}
}
