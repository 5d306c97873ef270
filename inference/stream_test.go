package inference

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestStreamUsageIsAlwaysCaptured streams with and without the client
// asking for usage: the upstream is always asked, the trace always has
// it, and the client sees the usage chunk only when it asked.
func TestStreamUsageIsAlwaysCaptured(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name        string
		model       string
		opts        map[string]any
		clientUsage bool
		content     string
		reasoning   bool
	}{
		{"client did not ask", "echo-model", nil, false, "echo: tell me more", false},
		{"client asked", "echo-model", map[string]any{"stream_options": map[string]any{"include_usage": true}}, true, "echo: tell me more", false},
		{"client said no", "echo-model", map[string]any{"stream_options": map[string]any{"include_usage": false, "continuous_usage_stats": false}}, false, "echo: tell me more", false},
		{"reasoning model", "reasoner", nil, false, "echo: tell me more", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]any{"stream": true}
			for k, v := range tc.opts {
				extra[k] = v
			}
			seen := len(h.up.Requests())
			resp := h.do(http.MethodPost, "/v1/chat/completions", msg(tc.model, "tell me more", extra), nil)
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			data := sseData(t, resp.Body)
			checkStreamEvents(t, data, tc.clientUsage)
			var opts map[string]any
			_ = json.Unmarshal(h.up.Requests()[seen].Body["stream_options"], &opts)
			if opts["include_usage"] != true {
				t.Errorf("upstream stream_options = %v, want include_usage true", opts)
			}
			if tc.opts != nil && opts["continuous_usage_stats"] == nil && tc.name == "client said no" {
				t.Errorf("the client's other stream_options were dropped: %v", opts)
			}
			checkStreamTrace(t, h.waitCall(resp.Header.Get(callIDHeader)), tc.model, tc.content, tc.reasoning)
		})
	}
}

// checkStreamTrace: a stream's call holds the completion its chunks add
// up to and the usage the upstream was asked for.
func checkStreamTrace(t *testing.T, call storage.Call, model, content string, reasoning bool) {
	t.Helper()
	choices, _ := field(t, call.Output, "choices").([]any)
	if len(choices) != 1 || field(t, mustJSON(choices[0]), "message", "content") != content {
		t.Fatalf("traced output %s, want content %q", call.Output, content)
	}
	if got := field(t, mustJSON(choices[0]), "message", "reasoning") != nil; got != reasoning {
		t.Errorf("reasoning in the output = %v, want %v: %s", got, reasoning, call.Output)
	}
	if u, _ := field(t, call.Summary, "usage", model, "total_tokens").(float64); u != 7 {
		t.Errorf("traced usage %s, want total_tokens 7", call.Summary)
	}
	if field(t, call.Attributes, "inference", "stream") != true {
		t.Errorf("attributes %s, want stream true", call.Attributes)
	}
}

func checkStreamEvents(t *testing.T, data []string, wantUsage bool) {
	t.Helper()
	if len(data) < 3 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("stream %q does not end with [DONE]", data)
	}
	sawUsage := false
	for _, d := range data[:len(data)-1] {
		var c struct {
			Choices []any
			Usage   map[string]any
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("event %q: %v", d, err)
		}
		if c.Usage != nil {
			sawUsage = true
			if len(c.Choices) != 0 {
				t.Errorf("usage arrived on a chunk with choices: %s", d)
			}
		}
	}
	if sawUsage != wantUsage {
		t.Errorf("client saw a usage chunk = %v, want %v", sawUsage, wantUsage)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestStreamBreaksAfterItBegan: the status is sent, so the client learns
// of the failure from an error event, and the trace records it.
func TestStreamBreaksAfterItBegan(t *testing.T) {
	h := newHarness(t)
	tests := []struct{ model, clientMsg, exception string }{
		{"midstream", "upstream exploded", "mid-stream"},
		{"cut", "before [DONE]", "before [DONE]"},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			resp := h.do(http.MethodPost, "/v1/chat/completions", msg(tc.model, "hi", map[string]any{"stream": true}), nil)
			defer resp.Body.Close()
			data := sseData(t, resp.Body)
			if resp.StatusCode != 200 || len(data) != 3 {
				t.Fatalf("status %d, events %q; want two chunks and an error event", resp.StatusCode, data)
			}
			if m, _ := field(t, []byte(data[2]), "error", "message").(string); !strings.Contains(m, tc.clientMsg) {
				t.Fatalf("last event %s, want an error object mentioning %q", data[2], tc.clientMsg)
			}
			call := h.waitCall(resp.Header.Get(callIDHeader))
			if call.Exception == nil || !strings.Contains(*call.Exception, tc.exception) {
				t.Fatalf("traced exception %v, want %q", call.Exception, tc.exception)
			}
			if field(t, call.Output, "choices") == nil {
				t.Errorf("the part streamed before the failure is not in the output: %s", call.Output)
			}
		})
	}
}

func TestClientGoingAwayCancelsTheUpstream(t *testing.T) {
	h := newHarness(t)
	resp := h.do(http.MethodPost, "/v1/chat/completions", msg("hold", "hi", map[string]any{"stream": true}), nil)
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for h.up.Canceled() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.up.Canceled() != 1 {
		t.Fatalf("upstream saw %d cancellations, want 1", h.up.Canceled())
	}
	call := h.waitCall(resp.Header.Get(callIDHeader))
	if field(t, call.Attributes, "inference", "client_closed") != true || call.Exception == nil {
		t.Fatalf("trace of an abandoned stream: exception %v, attributes %s", call.Exception, call.Attributes)
	}
}

func TestConcurrencyLimitPerProject(t *testing.T) {
	h := newHarness(t)
	limited := map[string]string{"Service-Project": "acme/limited"}
	hold := h.do(http.MethodPost, "/v1/chat/completions", msg("hold", "hi", map[string]any{"stream": true}), limited)
	if hold.StatusCode != 200 {
		t.Fatalf("first stream: %d", hold.StatusCode)
	}
	traced := len(h.calls.all())
	status, header, body := h.chat(msg("echo-model", "hi", nil), limited)
	if status != http.StatusTooManyRequests || header.Get("Retry-After") != "2" || header.Get("X-Should-Retry") != "true" {
		t.Fatalf("second request: %d, Retry-After %q: %s", status, header.Get("Retry-After"), body)
	}
	checkErrorBody(t, body, "requests", "", "rate_limit_exceeded", "Concurrency limit reached")
	if status, _, _ := h.chat(msg("echo-model", "hi", nil), map[string]string{"Service-Project": "acme/other"}); status != 200 {
		t.Fatalf("another project was limited too: %d", status)
	}
	_ = hold.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if status, _, _ := h.chat(msg("echo-model", "hi", nil), limited); status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot was not released when the stream ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := len(h.calls.all()) - traced; got != 3 {
		t.Errorf("%d calls traced since the refusal, want 3 (the refused request is not traced)", got)
	}
}
