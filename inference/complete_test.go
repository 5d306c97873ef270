package inference

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/weftdev/weft/auth"
)

func TestComplete(t *testing.T) {
	h := newHarness(t)
	member := auth.Principal{KeyID: "k1", UserID: "u1", Entity: "acme", Role: auth.RoleMember}
	request := func(model string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"model": model, "stream": true,
			"messages":        []any{map[string]any{"role": "user", "content": "judge this"}},
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "r", "schema": map[string]any{"type": "object"}}}})
		return b
	}
	out, err := h.gw.Complete(context.Background(), member, "acme/play", request("echo-model"))
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, out, "choices"); got == nil {
		t.Fatalf("answer %s has no choices", out)
	}
	var ans struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if json.Unmarshal(out, &ans) != nil || len(ans.Choices) != 1 || ans.Choices[0].Message.Content != `{"echo":"judge this"}` {
		t.Errorf("answer %s, want the structured echo", out)
	}
	sent := h.up.Requests()
	if len(sent) != 1 || string(sent[0].Body["model"]) != `"echo"` || sent[0].Body["stream"] != nil {
		t.Errorf("upstream got %v, want the upstream model and no stream", sent)
	}
	if n := len(h.calls.all()); n != 0 {
		t.Errorf("%d calls traced; the server's own completions are not", n)
	}
	for _, tc := range []struct {
		name    string
		p       auth.Principal
		model   string
		status  int
		forbids bool
	}{
		{"unknown model", member, "nope", http.StatusNotFound, false},
		{"failing upstream", member, "broken", http.StatusBadGateway, false},
		{"another team's project", auth.Principal{KeyID: "k2", UserID: "u2", Entity: "rival", Role: auth.RoleMember}, "echo-model", 0, true},
	} {
		_, err := h.gw.Complete(context.Background(), tc.p, "acme/play", request(tc.model))
		var ce *CompletionError
		switch {
		case tc.forbids && !errors.Is(err, auth.ErrForbidden):
			t.Errorf("%s: err %v, want forbidden", tc.name, err)
		case !tc.forbids && (!errors.As(err, &ce) || ce.StatusCode() != tc.status):
			t.Errorf("%s: err %v, want status %d", tc.name, err, tc.status)
		}
	}
}
