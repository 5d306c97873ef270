package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// routingConfig serves a caching model and a model following the
// production alias of acme's models registry collection "classifier".
// Aliases are refreshed only hourly: what moves traffic in the test is
// the alias event.
func routingConfig(t *testing.T, upstream string) string {
	t.Helper()
	cfg := fmt.Sprintf(`
inference:
  alias_refresh: 1h
  cache: {max_bytes: 1048576, ttl: 1m}
  providers:
    - {name: local, base_url: %q, api_key_env: WEFT_E2E_LLM_KEY}
  models:
    - id: gateway/cached
      cache: true
      upstreams: [{provider: local, model: echo-cached}]
      prices: {input_per_million: 1, output_per_million: 2}
    - id: gateway/classifier
      follow: {collection: acme/wandb-registry-models/classifier, alias: production}
      upstreams: [{provider: local}]
`, upstream)
	path := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startRoutingGateway(t *testing.T) *gateway {
	t.Helper()
	return startGatewayWith(t, upstreamtest.Options{Key: "sk-e2e-upstream"}, routingConfig)
}

// TestInferenceCacheAndAliasesWithOpenAIGoSDK drives the response cache
// and alias following with the official Go SDK against a running weft.
func TestInferenceCacheAndAliasesWithOpenAIGoSDK(t *testing.T) {
	g := startRoutingGateway(t)
	t.Run("cache", func(t *testing.T) { checkCacheHit(t, g) })
	t.Run("alias", func(t *testing.T) { checkAliasFollowing(t, g) })
}

// checkCacheHit: a second identical temperature-0 request is a hit,
// traced as a cached call that costs nothing.
func checkCacheHit(t *testing.T, g *gateway) {
	ctx := context.Background()
	c := g.client(0)
	params := userMessage("gateway/cached", "is this cached")
	params.Temperature = openai.Float(0)
	var first, second *http.Response
	a, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&first))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Chat.Completions.New(ctx, params, option.WithResponseInto(&second))
	if err != nil {
		t.Fatal(err)
	}
	if first.Header.Get("X-Weft-Cache") != "miss" || second.Header.Get("X-Weft-Cache") != "hit" || a.ID != b.ID ||
		b.Choices[0].Message.Content != "echo: is this cached" {
		t.Fatalf("x-weft-cache %q then %q; answers %s and %s", first.Header.Get("X-Weft-Cache"), second.Header.Get("X-Weft-Cache"), a.ID, b.ID)
	}
	cl := newClient(t, g.weft.URL, g.key)
	var read struct {
		Call struct {
			OpName     string          `json:"op_name"`
			Summary    json.RawMessage `json:"summary"`
			Attributes json.RawMessage `json:"attributes"`
		} `json:"call"`
	}
	id := second.Header.Get("X-Weft-Call-Id")
	eventually(t, func() bool {
		status, body := cl.post("/call/read", map[string]any{"project_id": sdkProject, "id": id, "include_costs": true})
		return status == http.StatusOK && json.Unmarshal(body, &read) == nil && read.Call.OpName != ""
	})
	var s struct {
		Cached bool            `json:"cached"`
		Usage  json.RawMessage `json:"usage"`
		Weave  struct {
			Costs map[string]struct {
				TotalCost float64 `json:"prompt_tokens_total_cost"`
			} `json:"costs"`
		} `json:"weave"`
	}
	if err := json.Unmarshal(read.Call.Summary, &s); err != nil {
		t.Fatal(err)
	}
	var attrs struct{ Inference struct{ Cache string } }
	_ = json.Unmarshal(read.Call.Attributes, &attrs)
	if !s.Cached || len(s.Usage) != 0 || len(s.Weave.Costs) != 0 || attrs.Inference.Cache != "hit" {
		t.Errorf("the hit's call: summary %s, attributes %s", read.Call.Summary, read.Call.Attributes)
	}
}

// checkAliasFollowing: two versions in the registry; the model follows
// production as it moves, and back.
func checkAliasFollowing(t *testing.T, g *gateway) {
	ctx := context.Background()
	c := g.client(0)
	cl := newClient(t, g.weft.URL, g.key)
	const registry = "acme/wandb-registry-models"
	var digests []string
	for _, served := range []string{"echo-v1", "echo-v2"} {
		var res struct{ Digest string }
		cl.mustPost("/obj/create", map[string]any{"obj": map[string]any{"project_id": registry, "object_id": "classifier",
			"val": map[string]any{"served_as": served}}}, &res)
		digests = append(digests, res.Digest)
	}
	point := func(digest string) {
		status, out := cl.do(http.MethodPut, "/objs/classifier/aliases", map[string]any{"project_id": registry, "digest": digest,
			"aliases": []string{"production"}})
		if status != http.StatusOK {
			t.Fatalf("PUT aliases = %d: %s", status, out)
		}
	}
	servedBy := func() string {
		resp, err := c.Chat.Completions.New(ctx, userMessage("gateway/classifier", "label this"))
		if err != nil {
			return err.Error()
		}
		return resp.Model
	}
	for _, step := range []struct {
		digest, want string
	}{{digests[0], "echo-v1"}, {digests[1], "echo-v2"}, {digests[0], "echo-v1"}} {
		point(step.digest)
		deadline := time.Now().Add(5 * time.Second)
		got := servedBy()
		for got != step.want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			got = servedBy()
		}
		if got != step.want {
			t.Fatalf("production at %s: answered by %q, want %s", step.digest, got, step.want)
		}
	}
}
