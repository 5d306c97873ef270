package catalog

import (
	"fmt"
	"math"
	"net/url"
	"time"
)

// ProviderConfig is one OpenAI-compatible upstream server
// (inference.providers[i]).
type ProviderConfig struct {
	// Name is how models refer to the provider; unique.
	Name string `yaml:"name"`
	// BaseURL ends where the OpenAI paths begin, e.g. http://host:8000/v1.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the provider's key,
	// so the key never sits in the file. Empty: no key is sent.
	APIKeyEnv string `yaml:"api_key_env"`
	// Timeout overrides inference.timeout for this provider.
	Timeout time.Duration `yaml:"timeout"`
}

// ModelConfig is one catalog entry (inference.models[i]).
type ModelConfig struct {
	// ID is what clients send as model and /v1/models lists; unique.
	ID string `yaml:"id"`
	// Upstreams serve the model, tried in order unless Balance says
	// otherwise.
	Upstreams []UpstreamConfig `yaml:"upstreams"`
	Prices    Prices           `yaml:"prices"`
	// Status is active (the default), deprecated (still served) or
	// retired (404).
	Status string `yaml:"status"`
	// OwnedBy and Created are what /v1/models reports ("system", 0).
	OwnedBy string `yaml:"owned_by"`
	Created int64  `yaml:"created"`
	// Images says the model generates images: POST /image/create sends
	// it to its upstreams' /images/generations.
	Images bool `yaml:"images"`
	// Routing: balancing, response cache and alias following (routing.go).
	Routing `yaml:",inline"`
}

// UpstreamConfig is one place a model is served.
type UpstreamConfig struct {
	Provider string `yaml:"provider"`
	// Model is the upstream's name for it; empty: the catalog id.
	Model string `yaml:"model"`
	// Weight is the upstream's share under balance: weighted. 1 when 0.
	Weight int `yaml:"weight"`
}

// Prices are USD per million tokens.
type Prices struct {
	InputPerMillion  float64 `yaml:"input_per_million"`
	OutputPerMillion float64 `yaml:"output_per_million"`
	// CachedInputPerMillion prices prompt tokens served from the prefix
	// cache; unset: the input price.
	CachedInputPerMillion *float64 `yaml:"cached_input_per_million"`
}

// Model statuses.
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusRetired    = "retired"
)

// Validate checks providers and models together: names and ids unique,
// every upstream naming a provider. Errors name the setting.
func Validate(providers []ProviderConfig, models []ModelConfig) []error {
	var errs []error
	names := map[string]bool{}
	for i, p := range providers {
		key := fmt.Sprintf("inference.providers[%d]", i)
		errs = append(errs, p.validate(key)...)
		if names[p.Name] {
			errs = append(errs, fmt.Errorf("%s.name: %q is used by an earlier provider; names must be unique", key, p.Name))
		}
		names[p.Name] = true
	}
	ids := map[string]bool{}
	for i, m := range models {
		key := fmt.Sprintf("inference.models[%d]", i)
		errs = append(errs, m.validate(key, names)...)
		if ids[m.ID] {
			errs = append(errs, fmt.Errorf("%s.id: %q is listed twice; ids must be unique", key, m.ID))
		}
		ids[m.ID] = true
	}
	return errs
}

func (p ProviderConfig) validate(key string) []error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, fmt.Errorf("%s.name: required", key))
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("%s.base_url: %q must be an http(s) URL such as http://127.0.0.1:8000/v1", key, p.BaseURL))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%s.timeout: %s must not be negative", key, p.Timeout))
	}
	return errs
}

func (m ModelConfig) validate(key string, providers map[string]bool) []error {
	var errs []error
	if m.ID == "" {
		errs = append(errs, fmt.Errorf("%s.id: required (what clients send as model)", key))
	}
	if len(m.Upstreams) == 0 {
		errs = append(errs, fmt.Errorf("%s.upstreams: list at least one {provider, model}", key))
	}
	for j, u := range m.Upstreams {
		if !providers[u.Provider] {
			errs = append(errs, fmt.Errorf("%s.upstreams[%d].provider: %q is not a name in inference.providers", key, j, u.Provider))
		}
	}
	switch m.Status {
	case "", StatusActive, StatusDeprecated, StatusRetired:
	default:
		errs = append(errs, fmt.Errorf("%s.status: %q is not one of active, deprecated, retired", key, m.Status))
	}
	errs = append(errs, m.Routing.validate(key, m.Upstreams)...)
	p := m.Prices
	if !validPrice(p.InputPerMillion) || !validPrice(p.OutputPerMillion) || (p.CachedInputPerMillion != nil && !validPrice(*p.CachedInputPerMillion)) {
		errs = append(errs, fmt.Errorf("%s.prices: prices must be finite and not negative (USD per million tokens)", key))
	}
	return errs
}

// validPrice also refuses NaN, which no comparison catches.
func validPrice(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }
