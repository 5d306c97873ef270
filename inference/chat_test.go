package inference

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftdev/weft/inference/upstreamtest"
	"github.com/weftdev/weft/storage"
)

// TestChatProxiesAndTraces checks an unstreamed request end to end: what
// the upstream received, what the client got and the call traced, for
// each way of naming the project.
func TestChatProxiesAndTraces(t *testing.T) {
	h := newHarness(t)
	extras := map[string]any{"temperature": 0.5, "top_k": 40, "chat_template_kwargs": map[string]any{"enable_thinking": false},
		"tools":       []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup", "parameters": map[string]any{"type": "object"}}}},
		"tool_choice": "auto"}
	tests := []struct {
		name    string
		headers map[string]string
		project string
	}{
		{"default project", nil, "acme/inference"},
		{"Service-Project", map[string]string{"Service-Project": "acme/chat"}, "acme/chat"},
		{"OpenAI-Project", map[string]string{"OpenAI-Project": "acme/sdk"}, "acme/sdk"},
		{"Service-Project wins", map[string]string{"Service-Project": "acme/a", "OpenAI-Project": "acme/b"}, "acme/a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := len(h.up.Requests())
			status, header, body := h.chat(msg("meta-llama/Llama-3.1-8B-Instruct", "where is Oslo", extras), tc.headers)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			checkToolAnswer(t, body)
			checkForwarded(t, h.up.Requests()[seen:], extras)
			call := h.waitCall(header.Get(callIDHeader))
			checkTracedCall(t, call, tc.project, body)
		})
	}
}

func checkToolAnswer(t *testing.T, body []byte) {
	t.Helper()
	var resp struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	c := resp.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "lookup" ||
		c.Message.ToolCalls[0].Function.Arguments != `{"input":"where is Oslo"}` {
		t.Fatalf("tool call not relayed unchanged: %s", body)
	}
}

// checkForwarded: the upstream got its own model name, the provider's key
// (never the caller's), and every other member unchanged.
func checkForwarded(t *testing.T, reqs []upstreamtest.Request, extras map[string]any) {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("upstream Authorization = %q, want the provider's key", got)
	}
	if got := string(r.Body["model"]); got != `"echo-llama"` {
		t.Errorf("upstream model = %s, want the upstream's name", got)
	}
	for k, v := range extras {
		want, _ := json.Marshal(v)
		if string(r.Body[k]) != string(want) {
			t.Errorf("member %s = %s upstream, want %s unchanged", k, r.Body[k], want)
		}
	}
}

func checkTracedCall(t *testing.T, call storage.Call, project string, answer []byte) {
	t.Helper()
	if call.ProjectID != project || call.OpName != opChatCompletions || call.Exception != nil || call.EndedAt == nil {
		t.Fatalf("call = project %s op %s exception %v", call.ProjectID, call.OpName, call.Exception)
	}
	if call.WBUserID != "user-acme-member" {
		t.Errorf("wb_user_id = %q, want the key's user", call.WBUserID)
	}
	if got := field(t, call.Inputs, "model"); got != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("inputs.model = %v, want the model as the client named it", got)
	}
	if string(call.Output) != strings.TrimSpace(string(answer)) {
		t.Errorf("output differs from the answer:\n%s\n%s", call.Output, answer)
	}
	usage, _ := field(t, call.Summary, "usage", "meta-llama/Llama-3.1-8B-Instruct").(map[string]any)
	if usage["requests"] != 1.0 || usage["prompt_tokens"] != 3.0 || usage["completion_tokens"] != 3.0 {
		t.Errorf("summary.usage = %s", call.Summary)
	}
	attrs, _ := field(t, call.Attributes, "inference").(map[string]any)
	if attrs["provider"] != "up" || attrs["upstream_model"] != "echo-llama" || attrs["status_code"] != 200.0 {
		t.Errorf("attributes = %s", call.Attributes)
	}
	if ttft, _ := attrs["time_to_first_token_ms"].(float64); ttft <= 0 {
		t.Errorf("time_to_first_token_ms = %v, want > 0", attrs["time_to_first_token_ms"])
	}
}

func TestFailoverBeforeTheFirstByte(t *testing.T) {
	h := newHarness(t)
	for _, stream := range []bool{false, true} {
		status, header, body := h.chat(msg("failover", "hi", map[string]any{"stream": stream}), nil)
		if status != 200 || !strings.Contains(string(body), "echo-second") {
			t.Fatalf("stream=%v: status %d: %s", stream, status, body)
		}
		call := h.waitCall(header.Get(callIDHeader))
		var attrs struct {
			Inference struct {
				Provider      string
				UpstreamModel string `json:"upstream_model"`
				Attempts      []attempt
			}
		}
		if err := json.Unmarshal(call.Attributes, &attrs); err != nil {
			t.Fatal(err)
		}
		a := attrs.Inference.Attempts
		if len(a) != 3 || a[0].Provider != "down" || a[0].Error == "" || a[1].Status != 500 || a[2].Status != 200 ||
			attrs.Inference.Provider != "up" || attrs.Inference.UpstreamModel != "echo-second" || call.Exception != nil {
			t.Fatalf("stream=%v: attempts %+v, served by %s", stream, a, attrs.Inference.UpstreamModel)
		}
	}
	if got := metricValue(t, h, "weft_inference_upstream_failures", "down"); got != 2 {
		t.Errorf("failures counted for provider down = %v, want 2", got)
	}
}

func metricValue(t *testing.T, h *harness, name, label string) float64 {
	t.Helper()
	families, err := h.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" || (len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == label) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}
