package inference

import (
	"net/http"
	"strings"
	"testing"
)

// TestChatErrors sends bad input of every kind and upstream failures of
// every kind, and checks the status, the OpenAI error body, the retry
// advice and whether the request was traced.
func TestChatErrors(t *testing.T) {
	h := newHarness(t)
	ok := msg("echo-model", "hi", nil)
	tests := []struct {
		name       string
		body       any
		headers    map[string]string
		status     int
		typ, param string
		code       string
		msgPart    string
		retry      bool
		traced     bool
	}{
		{"no key", ok, map[string]string{"Authorization": ""}, 401, "invalid_request_error", "", "invalid_api_key", "no API key", false, false},
		{"unknown key", ok, map[string]string{"Authorization": "Bearer weft-nope"}, 401, "invalid_request_error", "", "invalid_api_key", "unknown or revoked", false, false},
		{"project of another team", ok, map[string]string{"Service-Project": "rival/p"}, 401, "invalid_request_error", "", "invalid_api_key", "may not use project rival/p", false, false},
		{"openai project header checked too", ok, map[string]string{"OpenAI-Project": "rival/p"}, 401, "invalid_request_error", "", "invalid_api_key", "rival/p", false, false},
		{"viewer may not spend", ok, map[string]string{"Authorization": "Bearer " + h.viewerKey}, 401, "invalid_request_error", "", "invalid_api_key", "viewer", false, false},
		{"malformed project", ok, map[string]string{"Service-Project": "acme"}, 400, "invalid_request_error", "", "", "Service-Project", false, false},
		{"instance key names no team", ok, map[string]string{"Authorization": "Bearer " + h.adminKey}, 400, "invalid_request_error", "", "", "Service-Project", false, false},
		{"not JSON", "{", nil, 400, "invalid_request_error", "", "", "not a JSON object", false, false},
		{"JSON array", "[]", nil, 400, "invalid_request_error", "", "", "not a JSON object", false, false},
		{"too large", msg("echo-model", strings.Repeat("x", 5000), nil), nil, 413, "invalid_request_error", "", "", "max_request_bytes", false, false},
		{"missing model", map[string]any{"messages": []any{}}, nil, 400, "invalid_request_error", "model", "", "model: field required", false, true},
		{"model not a string", map[string]any{"model": 3, "messages": []any{}}, nil, 400, "invalid_request_error", "model", "", "model: must be", false, true},
		{"missing messages", map[string]any{"model": "echo-model"}, nil, 400, "invalid_request_error", "messages", "", "messages: field required", false, true},
		{"empty messages", map[string]any{"model": "echo-model", "messages": []any{}}, nil, 400, "invalid_request_error", "messages", "", "non-empty", false, true},
		{"message without role", map[string]any{"model": "echo-model", "messages": []any{map[string]any{"content": "x"}}}, nil, 400, "invalid_request_error", "messages", "", "messages[0].role", false, true},
		{"stream not a bool", msg("echo-model", "hi", map[string]any{"stream": "yes"}), nil, 400, "invalid_request_error", "stream", "", "stream: must be", false, true},
		{"stream_options not an object", msg("echo-model", "hi", map[string]any{"stream": true, "stream_options": 1}), nil, 400, "invalid_request_error", "stream_options", "", "stream_options", false, true},
		{"unknown model", msg("gpt-nope", "hi", nil), nil, 404, "invalid_request_error", "model", "model_not_found", "does not exist", false, true},
		{"retired model", msg("old", "hi", nil), nil, 404, "invalid_request_error", "model", "model_not_found", "retired", false, true},
		{"upstream refuses the request", msg("refuses", "hi", nil), nil, 400, "invalid_request_error", "", "", "upstream failure fail-400", false, true},
		{"every upstream fails", msg("broken", "hi", nil), nil, 502, "server_error", "", "upstream_error", "answered 500", true, true},
		{"upstream overloaded", msg("overloaded", "hi", nil), nil, 503, "server_error", "", "engine_overloaded", "overloaded", true, true},
		{"upstream unreachable", msg("unreachable", "hi", nil), nil, 503, "server_error", "", "engine_overloaded", "could be reached", true, true},
		{"upstream too slow", msg("slow", "hi", nil), nil, 503, "server_error", "", "engine_overloaded", "timeout", true, true},
		{"stream silent before its first byte", msg("silent", "hi", map[string]any{"stream": true}), nil, 503, "server_error", "", "engine_overloaded", "stream_idle_timeout", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.calls.all())
			status, header, body := h.chat(tc.body, tc.headers)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			checkErrorBody(t, body, tc.typ, tc.param, tc.code, tc.msgPart)
			if got := header.Get("X-Should-Retry") == "true" && header.Get("Retry-After") == "2"; got != tc.retry {
				t.Errorf("retry advice x-should-retry=%q retry-after=%q, want retryable=%v", header.Get("X-Should-Retry"), header.Get("Retry-After"), tc.retry)
			}
			if !tc.traced {
				if id := header.Get(callIDHeader); id != "" || len(h.calls.all()) != before {
					t.Errorf("refused before any work, yet traced (call id %q)", id)
				}
				return
			}
			call := h.waitCall(tracedID(t, header))
			if call.Exception == nil || !strings.Contains(*call.Exception, tc.msgPart) {
				t.Errorf("traced exception %v, want it to contain %q", call.Exception, tc.msgPart)
			}
		})
	}
}

// tracedID is the call id the answer names.
func tracedID(t *testing.T, header http.Header) string {
	t.Helper()
	id := header.Get(callIDHeader)
	if id == "" {
		t.Fatalf("a traced answer without %s", callIDHeader)
	}
	return id
}

func checkErrorBody(t *testing.T, body []byte, typ, param, code, msgPart string) {
	t.Helper()
	e, ok := field(t, body, "error").(map[string]any)
	if !ok {
		t.Fatalf("no error object in %s", body)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, present := e[k]; !present {
			t.Errorf("error object lacks %q: %s", k, body)
		}
	}
	want := map[string]any{"type": typ, "param": nilIfEmpty(param), "code": nilIfEmpty(code)}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("error.%s = %v, want %v (%s)", k, e[k], v, body)
		}
	}
	if m, _ := e["message"].(string); !strings.Contains(m, msgPart) {
		t.Errorf("error.message %q, want it to contain %q", m, msgPart)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
