// Package catalog turns the inference section of the configuration into
// the gateway's model catalog: which models clients may name, their status,
// the upstream servers that serve each (and how requests are spread over
// them: Routing) with the provider keys read from the environment, and
// their token prices.
//
// It must never import HTTP handlers, the pipeline or storage: it is data
// the gateway consults.
package catalog

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Provider is one OpenAI-compatible upstream server. Its key is kept
// unexported and out of every log line (see LogValue).
type Provider struct {
	Name    string
	BaseURL string // without a trailing slash
	// Timeout bounds one attempt; 0: the gateway's default.
	Timeout time.Duration
	apiKey  string
}

// APIKey is the secret sent upstream as a Bearer token; "" sends none.
func (p *Provider) APIKey() string { return p.apiKey }

// LogValue keeps the key out of logs even when a provider is logged whole.
func (p *Provider) LogValue() slog.Value { return slog.StringValue(p.Name) }

// Upstream is one place a model is served.
type Upstream struct {
	Provider *Provider
	Model    string // the upstream's name for the model
	// Weight is the share under BalanceWeighted (at least 1); Index
	// numbers the distinct provider and model pairs of the catalog from 0
	// (see Catalog.Upstreams), so per-upstream state is a slice index.
	Weight int
	Index  int
}

// Model is one catalog entry.
type Model struct {
	ID        string
	Upstreams []Upstream
	Status    string // StatusActive, ModelDeprecated or ModelRetired
	OwnedBy   string
	Created   int64
	Prices    Prices
	Images    bool // generates images (see ModelConfig.Images)
	Routing   Routing
}

// Retired reports whether requests for the model are refused.
func (m *Model) Retired() bool { return m.Status == StatusRetired }

// Catalog is the immutable set of models and providers.
type Catalog struct {
	models map[string]*Model
	listed []*Model
	// lora serves checkpoints' adapters (see WithLoRA).
	lora []Upstream
	// upstreams are the distinct upstreams, by Index (see indexUpstreams).
	upstreams []Upstream
}

// New builds the catalog from validated configuration (see Validate). Provider keys are
// read with getenv; a named variable that is unset or empty is an error,
// so a missing secret shows at start rather than as upstream 401s. A nil
// getenv reads no keys: for processes that only price calls.
func New(providerConfigs []ProviderConfig, modelConfigs []ModelConfig, getenv func(string) string, opts ...Option) (*Catalog, error) {
	providers := make(map[string]*Provider, len(providerConfigs))
	for i, p := range providerConfigs {
		prov := &Provider{Name: p.Name, BaseURL: strings.TrimRight(p.BaseURL, "/"), Timeout: p.Timeout}
		if p.APIKeyEnv != "" && getenv != nil {
			if prov.apiKey = getenv(p.APIKeyEnv); prov.apiKey == "" {
				return nil, fmt.Errorf("inference.providers[%d].api_key_env: the environment variable %s is not set; export the provider's key in it", i, p.APIKeyEnv)
			}
		}
		providers[p.Name] = prov
	}
	c := &Catalog{models: make(map[string]*Model, len(modelConfigs))}
	for i, m := range modelConfigs {
		model, err := newModel(m, providers)
		if err != nil {
			return nil, fmt.Errorf("inference.models[%d]: %w", i, err)
		}
		c.models[m.ID] = model
		if !model.Retired() {
			c.listed = append(c.listed, model)
		}
	}
	for _, o := range opts {
		if err := o(c, providers); err != nil {
			return nil, err
		}
	}
	c.indexUpstreams()
	return c, nil
}

func newModel(m ModelConfig, providers map[string]*Provider) (*Model, error) {
	model := &Model{ID: m.ID, Status: m.Status, OwnedBy: m.OwnedBy, Created: m.Created, Prices: m.Prices, Images: m.Images, Routing: m.Routing}
	if model.Status == "" {
		model.Status = StatusActive
	}
	if model.OwnedBy == "" {
		model.OwnedBy = "system"
	}
	for j, u := range m.Upstreams {
		p, ok := providers[u.Provider]
		if !ok {
			return nil, fmt.Errorf("upstreams[%d].provider: %q is not a name in inference.providers", j, u.Provider)
		}
		name := u.Model
		if name == "" {
			name = m.ID
		}
		model.Upstreams = append(model.Upstreams, Upstream{Provider: p, Model: name, Weight: max(u.Weight, 1)})
	}
	if len(model.Upstreams) == 0 {
		return nil, fmt.Errorf("upstreams: list at least one {provider, model}")
	}
	return model, nil
}

// Lookup finds a model by the id clients send, retired ones included.
func (c *Catalog) Lookup(id string) (*Model, bool) {
	m, ok := c.models[id]
	return m, ok
}

// Listed is what /v1/models shows: every model not retired, in
// configuration order.
func (c *Catalog) Listed() []*Model { return c.listed }
