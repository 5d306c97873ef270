package catalog

import (
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/pricing"
)

type testConfig struct {
	Providers []ProviderConfig
	Models    []ModelConfig
}

func newTestConfig() testConfig {
	cached := 0.05
	var cfg testConfig
	cfg.Providers = []ProviderConfig{
		{Name: "local", BaseURL: "http://127.0.0.1:8000/v1/", APIKeyEnv: "LOCAL_KEY"},
		{Name: "spare", BaseURL: "http://127.0.0.1:9000/v1"},
	}
	cfg.Models = []ModelConfig{
		{ID: "llama", Upstreams: []UpstreamConfig{{Provider: "local", Model: "llama-3.1-8b"}, {Provider: "spare"}},
			Prices: Prices{InputPerMillion: 0.2, OutputPerMillion: 0.6, CachedInputPerMillion: &cached}},
		{ID: "old", Upstreams: []UpstreamConfig{{Provider: "spare"}}, Status: StatusRetired},
		{ID: "legacy", Upstreams: []UpstreamConfig{{Provider: "spare"}}, Status: StatusDeprecated, OwnedBy: "acme", Created: 7},
	}
	return cfg
}

func TestNew(t *testing.T) {
	c, err := newCatalog(func(k string) string { return map[string]string{"LOCAL_KEY": "sk-local"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	m, ok := c.Lookup("llama")
	if !ok || m.Status != StatusActive || m.OwnedBy != "system" {
		t.Fatalf("llama = %+v, %v", m, ok)
	}
	tests := []struct {
		i                    int
		provider, base, name string
		key                  string
	}{
		{0, "local", "http://127.0.0.1:8000/v1", "llama-3.1-8b", "sk-local"},
		{1, "spare", "http://127.0.0.1:9000/v1", "llama", ""},
	}
	for _, tc := range tests {
		u := m.Upstreams[tc.i]
		if u.Provider.Name != tc.provider || u.Provider.BaseURL != tc.base || u.Model != tc.name || u.Provider.APIKey() != tc.key {
			t.Errorf("upstream %d = %+v (%s), want %s %s %s", tc.i, u, u.Provider.BaseURL, tc.provider, tc.base, tc.name)
		}
	}
	if old, ok := c.Lookup("old"); !ok || !old.Retired() {
		t.Errorf("retired model lookup = %+v, %v", old, ok)
	}
	var listed []string
	for _, m := range c.Listed() {
		listed = append(listed, fmt.Sprintf("%s/%s/%d", m.ID, m.OwnedBy, m.Created))
	}
	if got := strings.Join(listed, ","); got != "llama/system/0,legacy/acme/7" {
		t.Errorf("listed = %s; want active and deprecated models in order, retired left out", got)
	}
}

func TestNewRefusesAMissingKey(t *testing.T) {
	_, err := newCatalog(func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "inference.providers[0].api_key_env") || !strings.Contains(err.Error(), "LOCAL_KEY") {
		t.Fatalf("err = %v, want it to name the setting and the variable", err)
	}
	c, err := newCatalog(nil)
	if err != nil {
		t.Fatalf("a catalog that reads no keys (pricing only) = %v", err)
	}
	if m, _ := c.Lookup("llama"); m.Upstreams[0].Provider.APIKey() != "" {
		t.Fatal("a key was read without getenv")
	}
}

func TestProviderKeyStaysOutOfLogs(t *testing.T) {
	c, err := newCatalog(func(string) string { return "sk-secret" })
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Lookup("llama")
	var out strings.Builder
	slog.New(slog.NewTextHandler(&out, nil)).Info("attempt", "provider", m.Upstreams[0].Provider, "upstream", m.Upstreams[0])
	if strings.Contains(out.String(), "sk-secret") {
		t.Fatalf("log line carries the key: %s", out.String())
	}
}

func TestPrices(t *testing.T) {
	c, err := newCatalog(func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	rows := c.Prices()
	if len(rows) != 3 {
		t.Fatalf("%d price rows, want one per model, retired included", len(rows))
	}
	p, ok := pricing.Best("llama", time.Now(), rows)
	if !ok || !near(p.PromptTokenCost, 0.2e-6) || !near(p.CompletionTokenCost, 0.6e-6) || !near(p.CacheReadInputTokenCost, 0.05e-6) ||
		p.ProviderID != "local" || p.CreatedBy != PriceCreator || p.Level != pricing.LevelDefault {
		t.Fatalf("llama price = %+v", p)
	}
	if p, _ := pricing.Best("legacy", time.Now(), rows); p.CacheReadInputTokenCost != p.PromptTokenCost {
		t.Errorf("without a cached price, cached input should cost the input price: %+v", p)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }

func newCatalog(getenv func(string) string) (*Catalog, error) {
	cfg := newTestConfig()
	if errs := Validate(cfg.Providers, cfg.Models); len(errs) > 0 {
		panic(errs)
	}
	return New(cfg.Providers, cfg.Models, getenv)
}

func TestAdapterGoesToTheLoRAUpstreams(t *testing.T) {
	cfg := newTestConfig()
	getenv := func(string) string { return "k" }
	plain, err := New(cfg.Providers, cfg.Models, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Adapter("wandb-artifact:///a/p/m:step1", "a/p/m:step1", "llama"); ok {
		t.Fatal("an adapter resolved without LoRA upstreams")
	}
	c, err := New(cfg.Providers, cfg.Models, getenv, WithLoRA([]UpstreamConfig{{Provider: "spare"}, {Provider: "local"}}))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := c.Adapter("wandb-artifact:///a/p/m:step1", "a/p/m:step1", "llama")
	if !ok || m.ID != "wandb-artifact:///a/p/m:step1" || len(m.Upstreams) != 2 || m.Upstreams[0].Provider.Name != "spare" ||
		m.Upstreams[1].Model != "a/p/m:step1" || m.Prices.InputPerMillion != 0.2 {
		t.Fatalf("adapter = %+v", m)
	}
	if m, _ := c.Adapter("x", "x", "unknown-base"); m.Prices.InputPerMillion != 0 {
		t.Fatalf("an adapter of an unlisted base is priced: %+v", m.Prices)
	}
	if _, err := New(cfg.Providers, cfg.Models, getenv, WithLoRA([]UpstreamConfig{{Provider: "nope"}})); err == nil {
		t.Fatal("a LoRA upstream of an unknown provider was accepted")
	}
}
