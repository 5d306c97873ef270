package config

import (
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

const inferenceYAML = `
inference:
  providers:
    - name: local
      base_url: http://127.0.0.1:8000/v1
      api_key_env: LOCAL_LLM_KEY
  models:
    - id: meta-llama/Llama-3.1-8B-Instruct
      upstreams: [{provider: local, model: llama-3.1-8b}]
      prices: {input_per_million: 0.22, output_per_million: 0.22}
      status: active
`

func TestInferenceFromFile(t *testing.T) {
	cfg, err := Load([]string{"--config", writeFile(t, inferenceYAML)}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	inf := cfg.Inference
	if len(inf.Providers) != 1 || inf.Providers[0].APIKeyEnv != "LOCAL_LLM_KEY" || inf.Providers[0].BaseURL != "http://127.0.0.1:8000/v1" {
		t.Fatalf("providers = %+v", inf.Providers)
	}
	m := inf.Models[0]
	if m.ID != "meta-llama/Llama-3.1-8B-Instruct" || m.Upstreams[0] != (catalog.UpstreamConfig{Provider: "local", Model: "llama-3.1-8b"}) ||
		m.Prices.InputPerMillion != 0.22 || m.Status != catalog.StatusActive {
		t.Fatalf("model = %+v", m)
	}
	if inf.MaxConcurrentPerProject != 256 || inf.Timeout != 10*time.Minute {
		t.Fatalf("defaults lost: %+v", inf)
	}
}

func TestInferenceValidation(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantSub string
	}{
		{"unknown key", "inference:\n  providers:\n    - name: a\n      base_url: http://x/v1\n      api_key: secret\n", `unknown key "api_key"`},
		{"provider without name", "inference:\n  providers:\n    - base_url: http://x/v1\n", "inference.providers[0].name: required"},
		{"bad base url", "inference:\n  providers:\n    - name: a\n      base_url: localhost:8000\n", "inference.providers[0].base_url"},
		{"duplicate provider", "inference:\n  providers:\n    - {name: a, base_url: 'http://x/v1'}\n    - {name: a, base_url: 'http://y/v1'}\n", "inference.providers[1].name: \"a\" is used"},
		{"model without upstreams", "inference:\n  models:\n    - id: m\n", "inference.models[0].upstreams: list at least one"},
		{"unknown provider", "inference:\n  models:\n    - id: m\n      upstreams: [{provider: nope}]\n", `inference.models[0].upstreams[0].provider: "nope"`},
		{"bad status", "inference:\n  providers: [{name: a, base_url: 'http://x/v1'}]\n  models:\n    - {id: m, upstreams: [{provider: a}], status: gone}\n", "inference.models[0].status"},
		{"duplicate model", "inference:\n  providers: [{name: a, base_url: 'http://x/v1'}]\n  models:\n    - {id: m, upstreams: [{provider: a}]}\n    - {id: m, upstreams: [{provider: a}]}\n", "inference.models[1].id"},
		{"negative price", "inference:\n  providers: [{name: a, base_url: 'http://x/v1'}]\n  models:\n    - {id: m, upstreams: [{provider: a}], prices: {input_per_million: -1}}\n", "inference.models[0].prices"},
		{"NaN price", "inference:\n  providers: [{name: a, base_url: 'http://x/v1'}]\n  models:\n    - {id: m, upstreams: [{provider: a}], prices: {output_per_million: .nan}}\n", "inference.models[0].prices"},
		{"zero concurrency", "inference:\n  max_concurrent_per_project: 0\n", "inference.max_concurrent_per_project"},
		{"bad project override", "inference:\n  project_concurrency: {acme: 3}\n", `"acme" is not entity/project`},
		{"zero timeout", "inference:\n  timeout: 0s\n", "inference.timeout"},
		{"tiny trace queue", "inference:\n  trace_queue_bytes: 10\n", "inference.trace_queue_bytes"},
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
