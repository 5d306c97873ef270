package traceapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// threadsEpoch is the base of the fixtures' timestamps.
func threadsEpoch() time.Time { return time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) }

// writeTurn stores a finished call; a turn when turnID == id.
func (e *apiEnv) writeTurn(project, id, thread, turnID string, start, dur time.Duration) {
	e.t.Helper()
	end := threadsEpoch().Add(start + dur)
	c := storage.Call{ProjectID: project, ID: id, TraceID: "t-" + id, OpName: "weave:///" + project + "/op/chat:x",
		ThreadID: thread, TurnID: turnID, StartedAt: threadsEpoch().Add(start), EndedAt: &end,
		Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(`{}`)}
	op := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}}
	if _, err := e.store.WriteCallOps(context.Background(), []storage.CallOp{op}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *apiEnv) threads(body map[string]any) []map[string]any {
	e.t.Helper()
	status, out := e.send(http.MethodPost, "/threads/stream_query", body)
	if status != http.StatusOK {
		e.t.Fatalf("threads = %d %s", status, out)
	}
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(`{"thread_id":`)) {
			e.t.Errorf("line does not start with thread_id: %s", line)
		}
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			e.t.Fatalf("line %q: %v", line, err)
		}
		rows = append(rows, row)
	}
	return rows
}

func threadIDs(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r["thread_id"].(string))
	}
	return out
}

func TestThreadsStreamQuery(t *testing.T) {
	e := newAPIEnv(t)
	e.writeTurn("acme/app", "a1", "support", "a1", time.Minute, 1500*time.Millisecond)
	e.writeTurn("acme/app", "a2", "support", "a1", 2*time.Minute, time.Second) // inside turn a1
	e.writeTurn("acme/app", "a3", "support", "a3", 5*time.Minute, 500*time.Millisecond)
	e.writeTurn("acme/app", "b1", "sales", "b1", 7*time.Minute, 100*time.Millisecond)
	e.writeTurn("acme/other", "c1", "elsewhere", "c1", time.Minute, time.Second)

	rows := e.threads(map[string]any{"project_id": "acme/app"})
	if got := threadIDs(rows); !slices.Equal(got, []string{"sales", "support"}) {
		t.Fatalf("threads %v; want sales (last updated later) then support", got)
	}
	support := rows[1]
	want := map[string]any{"thread_id": "support", "turn_count": 2.0, "first_turn_id": "a1", "last_turn_id": "a3",
		"start_time": "2025-03-04T10:01:00Z", "last_updated": "2025-03-04T10:05:00.500000Z",
		"p50_turn_duration_ms": 1000.0, "p99_turn_duration_ms": 500 + 0.99*1000}
	for k, v := range want {
		if support[k] != v {
			t.Errorf("support.%s = %#v; want %#v", k, support[k], v)
		}
	}
	tests := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"sort by turn_count", map[string]any{"sort_by": []map[string]string{{"field": "turn_count", "direction": "desc"}}}, []string{"support", "sales"}},
		{"thread_ids", map[string]any{"filter": map[string]any{"thread_ids": []string{"support", "elsewhere"}}}, []string{"support"}},
		{"empty thread_ids matches nothing", map[string]any{"filter": map[string]any{"thread_ids": []string{}}}, nil},
		{"after", map[string]any{"filter": map[string]any{"after_datetime": "2025-03-04T10:06:00Z"}}, []string{"sales"}},
		{"before", map[string]any{"filter": map[string]any{"before_datetime": "2025-03-04T10:02:00Z"}}, []string{"support"}},
		{"page", map[string]any{"limit": 1, "offset": 1}, []string{"support"}},
		{"nulls are defaults", map[string]any{"filter": nil, "sort_by": nil, "limit": nil}, []string{"sales", "support"}},
	}
	for _, tt := range tests {
		body := map[string]any{"project_id": "acme/app"}
		for k, v := range tt.body {
			body[k] = v
		}
		if got := threadIDs(e.threads(body)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v; want %v", tt.name, got, tt.want)
		}
	}
	status, out := e.send(http.MethodPost, "/threads/stream_query", map[string]any{"project_id": "acme/none"})
	if status != http.StatusOK || len(out) != 0 {
		t.Errorf("threads of an empty project = %d %q", status, out)
	}
}

func TestThreadsNeedProject(t *testing.T) {
	e := newAPIEnv(t)
	status, out := e.send(http.MethodPost, "/threads/stream_query", `{}`)
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(out), "project_id") {
		t.Errorf("no project_id = %d %s; want 422 naming project_id", status, out)
	}
}
