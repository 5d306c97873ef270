package config

import (
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

const routingYAML = `
inference:
  retry: {max_retries: 1, backoff: 50ms, max_backoff: 1s, max_retry_after: 2s, max_elapsed: 5s}
  breaker: {failures: 3, cool_down: 10s}
  cache: {max_bytes: 1048576, ttl: 30s}
  alias_refresh: 2s
  providers:
    - {name: a, base_url: 'http://a/v1'}
    - {name: b, base_url: 'http://b/v1'}
  models:
    - id: spread
      balance: weighted
      cache: true
      upstreams: [{provider: a, weight: 3}, {provider: b}]
    - id: classifier
      follow:
        collection: acme/wandb-registry-models/classifier
        alias: production
        canary: {alias: canary, weight: 0.2}
      upstreams: [{provider: a}]
`

func TestInferenceRoutingFromFile(t *testing.T) {
	cfg, err := Load([]string{"--config", writeFile(t, routingYAML)}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	inf := cfg.Inference
	if r := inf.Retry; r.MaxRetries != 1 || r.Backoff != 50*time.Millisecond || r.MaxElapsed != 5*time.Second ||
		inf.Breaker.Failures != 3 || inf.Cache.MaxBytes != 1<<20 || inf.Cache.TTL != 30*time.Second || inf.AliasRefresh != 2*time.Second {
		t.Fatalf("routing = %+v", inf.RoutingConfig)
	}
	spread, clf := inf.Models[0], inf.Models[1]
	if spread.Balance != catalog.BalanceWeighted || !spread.Cache || spread.Upstreams[0].Weight != 3 {
		t.Fatalf("spread = %+v", spread)
	}
	if f := clf.Follow; f == nil || f.ProjectID() != "acme/wandb-registry-models" || f.Name() != "classifier" ||
		f.Canary == nil || f.Canary.Weight != 0.2 {
		t.Fatalf("classifier follows %+v", clf.Follow)
	}
	def, err := Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if d := def.Inference; d.Retry.MaxRetries != 2 || d.Breaker.Failures != 5 || d.Cache.MaxBytes != 64<<20 || d.AliasRefresh != 5*time.Second {
		t.Fatalf("defaults = %+v", d.RoutingConfig)
	}
}

func TestInferenceRoutingValidation(t *testing.T) {
	const models = "inference:\n  providers: [{name: a, base_url: 'http://x/v1'}]\n  models:\n"
	tests := []struct {
		name    string
		yaml    string
		wantSub string
	}{
		{"bad balance", models + "    - {id: m, balance: random, upstreams: [{provider: a}]}\n", `inference.models[0].balance: "random" is not one of`},
		{"negative weight", models + "    - {id: m, upstreams: [{provider: a, weight: -1}]}\n", "inference.models[0].upstreams[0].weight"},
		{"follow without project", models + "    - {id: m, follow: {collection: classifier, alias: production}, upstreams: [{provider: a}]}\n", "inference.models[0].follow.collection"},
		{"follow without alias", models + "    - {id: m, follow: {collection: a/b/c}, upstreams: [{provider: a}]}\n", "inference.models[0].follow.alias"},
		{"canary on the same alias", models + "    - {id: m, follow: {collection: a/b/c, alias: p, canary: {alias: p, weight: 0.1}}, upstreams: [{provider: a}]}\n", "inference.models[0].follow.canary.alias"},
		{"canary weight of 1", models + "    - {id: m, follow: {collection: a/b/c, alias: p, canary: {alias: c, weight: 1}}, upstreams: [{provider: a}]}\n", "inference.models[0].follow.canary.weight"},
		{"unknown follow key", models + "    - {id: m, follow: {collection: a/b/c, alias: p, version: 3}, upstreams: [{provider: a}]}\n", `unknown key "version"`},
		{"negative retries", "inference:\n  retry: {max_retries: -1}\n", "inference.retry.max_retries"},
		{"backoff over its cap", "inference:\n  retry: {backoff: 5s, max_backoff: 1s}\n", "inference.retry.max_backoff"},
		{"zero elapsed", "inference:\n  retry: {max_elapsed: 0s}\n", "inference.retry.max_elapsed"},
		{"breaker of no failures", "inference:\n  breaker: {failures: 0}\n", "inference.breaker.failures"},
		{"zero cool-down", "inference:\n  breaker: {cool_down: 0s}\n", "inference.breaker.cool_down"},
		{"negative cache", "inference:\n  cache: {max_bytes: -1}\n", "inference.cache.max_bytes"},
		{"zero ttl", "inference:\n  cache: {ttl: 0s}\n", "inference.cache.ttl"},
		{"zero alias refresh", "inference:\n  alias_refresh: 0s\n", "inference.alias_refresh"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load([]string{"--config", writeFile(t, tc.yaml)}, env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantSub)
			}
		})
	}
}
