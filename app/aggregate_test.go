package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

type aggregateOut struct {
	BucketSeconds int64 `json:"bucket_seconds"`
	Buckets       []struct {
		Start        string   `json:"start"`
		CallCount    int64    `json:"call_count"`
		ErrorCount   int64    `json:"error_count"`
		P50          *float64 `json:"latency_p50_ms"`
		PromptTokens int64    `json:"prompt_tokens"`
		TotalTokens  int64    `json:"total_tokens"`
		Cost         float64  `json:"cost"`
	} `json:"buckets"`
}

// writeChartCalls writes two calls in minute 0 (one failed, both using
// gpt-4o) and one in minute 2 of 2025-01-01.
func writeChartCalls(e *env) {
	var batch []map[string]any
	for _, c := range []struct{ id, start, end, exc string }{
		{"k1", "2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z", ""},
		{"k2", "2025-01-01T00:00:30Z", "2025-01-01T00:00:33Z", "ValueError: bad"},
		{"k3", "2025-01-01T00:02:00Z", "2025-01-01T00:02:02Z", ""},
	} {
		end := map[string]any{"project_id": "acme/app", "id": c.id, "ended_at": c.end, "output": "ok",
			"summary": map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{
				"requests": 1, "prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}}}}
		if c.exc != "" {
			end["exception"] = c.exc
		}
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": startBody(c.id, "", "chat", c.start)}},
			map[string]any{"mode": "end", "req": map[string]any{"end": end}})
	}
	e.ok("/call/upsert_batch", map[string]any{"batch": batch}, nil)
}

func TestCallsAggregate(t *testing.T) {
	e := newEnv(t)
	writeChartCalls(e)
	var out aggregateOut
	e.ok("/calls/aggregate", map[string]any{"project_id": "acme/app", "start": "2025-01-01T00:00:00Z",
		"end": "2025-01-01T00:03:00Z", "bucket_seconds": 60, "filter": map[string]any{"op_names": []string{"chat"}}}, &out)
	if len(out.Buckets) != 3 {
		t.Fatalf("buckets = %+v, want 3 (the empty minute too)", out.Buckets)
	}
	b0, b1, b2 := out.Buckets[0], out.Buckets[1], out.Buckets[2]
	if b0.Start != "2025-01-01T00:00:00Z" || b0.CallCount != 2 || b0.ErrorCount != 1 || b0.P50 == nil || *b0.P50 != 2000 {
		t.Errorf("minute 0 = %+v, want 2 calls, 1 error, p50 2000 ms", b0)
	}
	if b0.PromptTokens != 2000 || b0.TotalTokens != 3000 || b0.Cost <= 0 || b0.Cost < 2*b2.Cost-1e-9 {
		t.Errorf("minute 0 usage = %+v, want 2000 prompt, 3000 total and twice minute 2's cost %v", b0, b2.Cost)
	}
	if b1.CallCount != 0 || b1.P50 != nil || b1.Cost != 0 {
		t.Errorf("minute 1 = %+v, want empty", b1)
	}
}

func TestCallsAggregateRefusals(t *testing.T) {
	e := newEnv(t)
	valid := map[string]any{"project_id": "acme/app", "start": "2025-01-01T00:00:00Z", "end": "2025-01-02T00:00:00Z", "bucket_seconds": 3600}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range valid {
			m[key] = val
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name, key string
		body      map[string]any
		want      int
	}{
		{"other entity", e.evil, valid, http.StatusForbidden},
		{"no key", "", valid, http.StatusUnauthorized},
		{"zero bucket", e.member, with("bucket_seconds", 0), http.StatusBadRequest},
		{"too many buckets", e.member, with("bucket_seconds", 1), http.StatusBadRequest},
		{"negative bucket", e.member, with("bucket_seconds", -60), http.StatusBadRequest},
		{"bucket overflows milliseconds", e.member, with("bucket_seconds", int64(1e18)), http.StatusBadRequest},
		{"bucket overflows a duration", e.member, with("bucket_seconds", int64(9.3e9)), http.StatusBadRequest},
		{"bucket times range overflows", e.member, map[string]any{"project_id": "acme/app", "start": "0001-01-01T00:00:00Z",
			"end": "9999-01-01T00:00:00Z", "bucket_seconds": int64(4e9)}, http.StatusBadRequest},
		{"largest bucket", e.member, with("bucket_seconds", storage.MaxAggregateBucketSeconds), http.StatusOK},
		{"range past 292 years", e.member, map[string]any{"project_id": "acme/app", "start": "0001-01-01T00:00:00Z",
			"end": "9999-01-01T00:00:00Z", "bucket_seconds": storage.MaxAggregateBucketSeconds}, http.StatusOK},
		{"end before start", e.member, with("end", "2024-01-01T00:00:00Z"), http.StatusBadRequest},
		{"bad query", e.member, with("query", map[string]any{"$expr": 5}), http.StatusUnprocessableEntity},
		{"viewer may read", e.viewer, valid, http.StatusOK},
	} {
		status, _, body := e.do(http.MethodPost, "/calls/aggregate", tc.key, tc.body)
		if status != tc.want {
			t.Errorf("%s: status %d (%s), want %d", tc.name, status, body, tc.want)
		}
		if strings.Contains(tc.name, "bucket") && status == http.StatusBadRequest && !strings.Contains(string(body), "bucket_seconds") {
			t.Errorf("%s: answer %s does not name bucket_seconds", tc.name, body)
		}
	}
}

func TestProjectsList(t *testing.T) {
	e := newEnv(t)
	writeChartCalls(e)
	e.ok("/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/prompts", "object_id": "system", "val": "be brief"}}, nil)
	var out struct {
		Projects []struct {
			ProjectID      string  `json:"project_id"`
			CallCount      int64   `json:"call_count"`
			LastCallAt     *string `json:"last_call_at"`
			ObjectCount    int64   `json:"object_count"`
			LastActivityAt string  `json:"last_activity_at"`
		} `json:"projects"`
	}
	e.ok("/projects/list", map[string]any{"entity": "acme"}, &out)
	if len(out.Projects) != 2 {
		t.Fatalf("projects = %+v, want acme/prompts (objects only) and acme/app", out.Projects)
	}
	if p := out.Projects[0]; p.ProjectID != "acme/prompts" || p.ObjectCount != 1 || p.CallCount != 0 || p.LastCallAt != nil || p.LastActivityAt == "" {
		t.Errorf("newest project = %+v, want acme/prompts with one object and no calls", p)
	}
	if p := out.Projects[1]; p.ProjectID != "acme/app" || p.CallCount != 3 || p.LastCallAt == nil ||
		*p.LastCallAt != "2025-01-01T00:02:00Z" || p.LastActivityAt != *p.LastCallAt {
		t.Errorf("projects[1] = %+v, want acme/app with 3 calls, last at 00:02", p)
	}
	for _, tc := range []struct {
		name, key string
		body      any
		want      int
	}{
		{"other entity", e.evil, map[string]any{"entity": "acme"}, http.StatusForbidden},
		{"own entity, none yet", e.evil, map[string]any{"entity": "evil"}, http.StatusOK},
		{"no entity", e.member, map[string]any{}, http.StatusUnprocessableEntity},
		{"no key", "", map[string]any{"entity": "acme"}, http.StatusUnauthorized},
	} {
		if status, _, body := e.do(http.MethodPost, "/projects/list", tc.key, tc.body); status != tc.want {
			t.Errorf("%s: status %d (%s), want %d", tc.name, status, body, tc.want)
		}
	}
}
