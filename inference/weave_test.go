package inference

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func weaveBody(project, model string, extra map[string]any) map[string]any {
	inputs := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "good morning"}},
		"vertex_credentials": "{\"secret\":1}"}
	b := map[string]any{"project_id": project, "inputs": inputs}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestWeaveCompletionsCreate(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name       string
		body       map[string]any
		status     int
		content    string // the answer's content, or the response error
		tracked    bool
		exceptions bool
	}{
		{"tracked", weaveBody("acme/play", "echo-model", map[string]any{"trace_id": "trace-1", "parent_id": "parent-1"}), 200, "echo: good morning", true, false},
		{"untracked", weaveBody("acme/play", "echo-model", map[string]any{"track_llm_call": false}), 200, "echo: good morning", false, false},
		{"unknown model", weaveBody("acme/play", "nope", nil), 200, "does not exist", true, true},
		{"upstream failure", weaveBody("acme/play", "broken", nil), 200, "answered 500", true, true},
		{"upstream refusal", weaveBody("acme/play", "refuses", nil), 200, "upstream failure fail-400", true, true},
		{"other team's project", weaveBody("rival/play", "echo-model", nil), 403, "not a member", false, false},
		{"prompt templates", weaveBody("acme/play", "echo-model", map[string]any{"inputs": map[string]any{"model": "echo-model", "prompt": "weave:///x"}}), 400, "inputs.prompt", false, false},
		{"inputs not an object", map[string]any{"project_id": "acme/play", "inputs": 3}, 400, "inputs:", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.calls.all())
			resp := h.do(http.MethodPost, "/completions/create", tc.body, nil)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.content) {
				t.Fatalf("%d %s; want %d with %q", resp.StatusCode, body, tc.status, tc.content)
			}
			if tc.status != 200 {
				if field(t, body, "reason") == nil {
					t.Errorf("error not in the trace API's shape: %s", body)
				}
				return
			}
			id, _ := field(t, body, "weave_call_id").(string)
			if (id != "") != tc.tracked {
				t.Fatalf("weave_call_id %q, tracked %v", id, tc.tracked)
			}
			if !tc.tracked {
				if len(h.calls.all()) != before {
					t.Error("track_llm_call false, yet traced")
				}
				return
			}
			checkWeaveCall(t, h, id, tc.exceptions)
		})
	}
}

func checkWeaveCall(t *testing.T, h *harness, id string, wantException bool) {
	t.Helper()
	call := h.waitCall(id)
	if call.OpName != opWeaveCompletion || call.ProjectID != "acme/play" || (call.Exception != nil) != wantException {
		t.Fatalf("call op %s project %s exception %v", call.OpName, call.ProjectID, call.Exception)
	}
	if strings.Contains(string(call.Inputs), "secret") {
		t.Errorf("credentials stored in inputs: %s", call.Inputs)
	}
	if !wantException && (call.TraceID != "trace-1" || call.ParentID != "parent-1" || field(t, call.Summary, "usage", "echo-model") == nil) {
		t.Errorf("trace %s parent %s summary %s", call.TraceID, call.ParentID, call.Summary)
	}
}

func TestWeaveCompletionsCreateStream(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name      string
		model     string
		lastError string
	}{
		{"complete", "echo-model", ""},
		{"broken mid-stream", "cut", "before [DONE]"},
		{"unknown model", "nope", "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.do(http.MethodPost, "/completions/create_stream", weaveBody("acme/play", tc.model, nil), nil)
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jsonl" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			lines := jsonLines(t, resp.Body)
			id, _ := lines[0]["_meta"].(map[string]any)["weave_call_id"].(string)
			if id == "" {
				t.Fatalf("first line %v, want the call id", lines[0])
			}
			last := lines[len(lines)-1]
			if msg, _ := last["error"].(string); !strings.Contains(msg, tc.lastError) || (tc.lastError == "") != (last["error"] == nil) {
				t.Fatalf("last line %v, want error %q", last, tc.lastError)
			}
			for _, l := range lines[1:] {
				if l["usage"] != nil {
					t.Errorf("a usage chunk the client did not ask for: %v", l)
				}
			}
			call := h.waitCall(id)
			if (call.Exception != nil) != (tc.lastError != "") {
				t.Errorf("exception %v", call.Exception)
			}
		})
	}
}

func jsonLines(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatal("no lines")
	}
	return out
}
