package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference/catalog"
)

func gatewayConfig(t *testing.T, keyEnv string) config.Config {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Inference.Providers = []catalog.ProviderConfig{{Name: "local", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: keyEnv}}
	cfg.Inference.Models = []catalog.ModelConfig{{ID: "m", Upstreams: []catalog.UpstreamConfig{{Provider: "local"}}}}
	return cfg
}

// TestGatewayNeedsItsProviderKeys: a provider key that is not in the
// environment stops the start, naming the setting, rather than turning
// into upstream 401s later.
func TestGatewayNeedsItsProviderKeys(t *testing.T) {
	_, err := app.New(context.Background(), gatewayConfig(t, "WEFT_APP_TEST_UNSET_KEY"), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "inference.providers[0].api_key_env") || !strings.Contains(err.Error(), "WEFT_APP_TEST_UNSET_KEY") {
		t.Fatalf("app.New = %v, want an error naming the setting and the variable", err)
	}
}

// TestGatewayRoutes: the /v1 routes are served on the API listener and
// answer in the OpenAI shape; gateway metrics are on /metrics.
func TestGatewayRoutes(t *testing.T) {
	t.Setenv("WEFT_APP_TEST_KEY", "sk-x")
	e := newEnv(t, func(c *config.Config) { c.Inference = gatewayConfig(t, "WEFT_APP_TEST_KEY").Inference })
	tests := []struct {
		method, path, key, want string
		status                  int
	}{
		{http.MethodGet, "/v1/models", e.member, `"id":"m"`, 200},
		{http.MethodPost, "/v1/chat/completions", "", `"code":"invalid_api_key"`, 401},
		{http.MethodPost, "/completions/create", "", `"reason"`, 401},
		{http.MethodGet, "/metrics", "", "weft_inference_lost_calls", 200},
	}
	for _, tc := range tests {
		status, _, body := e.do(tc.method, tc.path, tc.key, `{}`)
		if status != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s = %d %s; want %d with %s", tc.method, tc.path, status, body, tc.status, tc.want)
		}
	}
}
