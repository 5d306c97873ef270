package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// checkSDKErrors: each failure reaches the SDK as an *openai.Error with
// the status and code a client can act on.
func checkSDKErrors(t *testing.T, g *gateway) {
	ctx := context.Background()
	tests := []struct {
		name   string
		client *openai.Client
		model  string
		status int
		code   string
	}{
		{"unknown model", g.client(0), "gpt-nope", 404, "model_not_found"},
		{"retired model", g.client(0), "gateway/retired", 404, "model_not_found"},
		{"wrong key", g.client(0, option.WithAPIKey("weft-wrong")), llamaID, 401, "invalid_api_key"},
		{"other team's project", g.client(0, option.WithHeader("Service-Project", "rival/x")), llamaID, 401, "invalid_api_key"},
		{"upstream error", g.client(0), "gateway/broken", 502, "upstream_error"},
		{"upstream too slow", g.client(0), "gateway/too-slow", 503, "engine_overloaded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.client.Chat.Completions.New(ctx, userMessage(tc.model, "hi"))
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Code != tc.code {
				t.Fatalf("err = %v, want status %d code %s", err, tc.status, tc.code)
			}
		})
	}
	t.Run("error mid-stream", func(t *testing.T) {
		stream := g.client(0).Chat.Completions.NewStreaming(ctx, userMessage("gateway/midstream", "hi"))
		for stream.Next() {
		}
		if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "upstream exploded") {
			t.Fatalf("stream error %v", err)
		}
	})
	t.Run("concurrency limit", func(t *testing.T) { checkConcurrencyLimit(t, g) })
}

func checkConcurrencyLimit(t *testing.T, g *gateway) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	limited := option.WithHeader("Service-Project", "acme/limited")
	held := g.client(0, limited).Chat.Completions.NewStreaming(ctx, userMessage("gateway/hold", "hold on"))
	if !held.Next() {
		t.Fatalf("held stream: %v", held.Err())
	}
	_, err := g.client(0, limited).Chat.Completions.New(context.Background(), userMessage(llamaID, "me too"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Response.Header.Get("Retry-After") != "1" {
		t.Fatalf("second request in a project at its limit: %v", err)
	}
	cancel()
	_ = held.Close()
	// The SDK retries a 429 after its Retry-After; by then the slot is free.
	if _, err := g.client(3, limited).Chat.Completions.New(context.Background(), userMessage(llamaID, "now?")); err != nil {
		t.Fatalf("after the stream ended: %v", err)
	}
}

// checkCallsAndCosts reads each call back through the calls API, with
// the usage the gateway captured and the catalog's price applied.
func checkCallsAndCosts(t *testing.T, g *gateway, ids []string) {
	c := newClient(t, g.weft.URL, g.key)
	for _, id := range ids {
		var read struct {
			Call struct {
				OpName  string          `json:"op_name"`
				Summary json.RawMessage `json:"summary"`
			} `json:"call"`
		}
		eventually(t, func() bool {
			status, body := c.post("/call/read", map[string]any{"project_id": sdkProject, "id": id, "include_costs": true})
			return status == http.StatusOK && json.Unmarshal(body, &read) == nil && read.Call.OpName != ""
		})
		var s struct {
			Usage map[string]struct {
				Requests int64 `json:"requests"`
			} `json:"usage"`
			Weave struct {
				Costs map[string]struct {
					PromptTokens          int64   `json:"prompt_tokens"`
					PromptTokensTotalCost float64 `json:"prompt_tokens_total_cost"`
					CompletionTotalCost   float64 `json:"completion_tokens_total_cost"`
				} `json:"costs"`
			} `json:"weave"`
		}
		if err := json.Unmarshal(read.Call.Summary, &s); err != nil {
			t.Fatal(err)
		}
		cost := s.Weave.Costs[llamaID]
		want := float64(cost.PromptTokens) * llamaPrice / 1e6
		if read.Call.OpName != "openai.chat.completions.create" || s.Usage[llamaID].Requests != 1 || cost.PromptTokens == 0 || math.Abs(cost.PromptTokensTotalCost-want) > 1e-12 || cost.CompletionTotalCost <= 0 {
			t.Errorf("call %s: op %s, summary %s", id, read.Call.OpName, read.Call.Summary)
		}
	}
}
