package config

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// Inference configures the OpenAI-compatible gateway: the upstream model
// servers it forwards to (providers), the models clients may ask for and
// the bounds that protect the gateway and the upstreams.
type Inference struct {
	// Providers are OpenAI-compatible servers; names are unique.
	Providers []InferenceProvider `yaml:"providers"`
	// Models are what clients send as `model` and /v1/models lists.
	Models []InferenceModel `yaml:"models"`
	// MaxConcurrentPerProject caps the requests in flight per project;
	// beyond it clients get 429 with Retry-After. 256.
	MaxConcurrentPerProject int `yaml:"max_concurrent_per_project"`
	// ProjectConcurrency overrides the cap per "entity/project".
	ProjectConcurrency map[string]int `yaml:"project_concurrency"`
	// RetryAfter is what 429 and 503 answers tell clients to wait. 1s.
	RetryAfter time.Duration `yaml:"retry_after"`
	// ConnectTimeout bounds connecting to one upstream. 10s.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// Timeout bounds one upstream attempt, from sending the request to
	// the end of the answer (the whole stream). 10m.
	Timeout time.Duration `yaml:"timeout"`
	// StreamIdleTimeout bounds the silence between two stream events
	// (and before the first). 2m.
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// MaxRequestBytes caps a chat request body. 8 MiB.
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxResponseBytes caps a non-streaming answer, one stream event and
	// the output assembled from a stream for its trace. 8 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// TraceQueueCalls and TraceQueueBytes bound the traced calls waiting
	// for the ingest pipeline; beyond them calls are dropped and counted.
	TraceQueueCalls int   `yaml:"trace_queue_calls"`
	TraceQueueBytes int64 `yaml:"trace_queue_bytes"`
}

// InferenceProvider is one OpenAI-compatible upstream server.
type InferenceProvider struct {
	// Name is how models refer to the provider.
	Name string `yaml:"name"`
	// BaseURL ends where the OpenAI paths begin, e.g. http://host:8000/v1.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the provider's key,
	// so the key never sits in the file. Empty: no key is sent.
	APIKeyEnv string `yaml:"api_key_env"`
	// Timeout overrides inference.timeout for this provider.
	Timeout time.Duration `yaml:"timeout"`
}

// InferenceModel is one catalog entry.
type InferenceModel struct {
	ID        string              `yaml:"id"`
	Upstreams []InferenceUpstream `yaml:"upstreams"`
	Prices    InferencePrices     `yaml:"prices"`
	// Status is active (the default), deprecated (still served) or
	// retired (404).
	Status string `yaml:"status"`
	// OwnedBy and Created are what /v1/models reports ("system", 0).
	OwnedBy string `yaml:"owned_by"`
	Created int64  `yaml:"created"`
}

// InferenceUpstream is one place a model is served; they are tried in order.
type InferenceUpstream struct {
	Provider string `yaml:"provider"`
	// Model is the upstream's name for it; empty: the catalog id.
	Model string `yaml:"model"`
}

// InferencePrices are USD per million tokens.
type InferencePrices struct {
	InputPerMillion  float64 `yaml:"input_per_million"`
	OutputPerMillion float64 `yaml:"output_per_million"`
	// CachedInputPerMillion prices prompt tokens served from the prefix
	// cache; unset: the input price.
	CachedInputPerMillion *float64 `yaml:"cached_input_per_million"`
}

// Model statuses.
const (
	ModelActive     = "active"
	ModelDeprecated = "deprecated"
	ModelRetired    = "retired"
)

// DefaultInference returns the documented defaults, with no providers.
func DefaultInference() Inference {
	return Inference{
		MaxConcurrentPerProject: 256,
		RetryAfter:              time.Second,
		ConnectTimeout:          10 * time.Second,
		Timeout:                 10 * time.Minute,
		StreamIdleTimeout:       2 * time.Minute,
		MaxRequestBytes:         8 << 20,
		MaxResponseBytes:        8 << 20,
		TraceQueueCalls:         10000,
		TraceQueueBytes:         64 << 20,
	}
}

func (c Inference) validate() []error {
	errs := c.validateBounds()
	providers := map[string]bool{}
	for i, p := range c.Providers {
		key := fmt.Sprintf("inference.providers[%d]", i)
		errs = append(errs, p.validate(key)...)
		if providers[p.Name] {
			errs = append(errs, fmt.Errorf("%s.name: %q is used by an earlier provider; names must be unique", key, p.Name))
		}
		providers[p.Name] = true
	}
	models := map[string]bool{}
	for i, m := range c.Models {
		key := fmt.Sprintf("inference.models[%d]", i)
		errs = append(errs, m.validate(key, providers)...)
		if models[m.ID] {
			errs = append(errs, fmt.Errorf("%s.id: %q is listed twice; ids must be unique", key, m.ID))
		}
		models[m.ID] = true
	}
	return errs
}

func (c Inference) validateBounds() []error {
	var errs []error
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"retry_after", c.RetryAfter}, {"connect_timeout", c.ConnectTimeout}, {"timeout", c.Timeout}, {"stream_idle_timeout", c.StreamIdleTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("inference.%s: %s must be positive", d.key, d.v))
		}
	}
	for _, n := range []struct {
		key    string
		v, min int64
	}{{"max_concurrent_per_project", int64(c.MaxConcurrentPerProject), 1}, {"max_request_bytes", c.MaxRequestBytes, 1024},
		{"max_response_bytes", c.MaxResponseBytes, 1024}, {"trace_queue_calls", int64(c.TraceQueueCalls), 1}, {"trace_queue_bytes", c.TraceQueueBytes, 1 << 20}} {
		if n.v < n.min {
			errs = append(errs, fmt.Errorf("inference.%s: %d must be at least %d", n.key, n.v, n.min))
		}
	}
	for p, n := range c.ProjectConcurrency {
		if e, proj, ok := strings.Cut(p, "/"); !ok || e == "" || proj == "" {
			errs = append(errs, fmt.Errorf("inference.project_concurrency: %q is not entity/project", p))
		}
		if n < 1 {
			errs = append(errs, fmt.Errorf("inference.project_concurrency[%q]: %d must be at least 1", p, n))
		}
	}
	return errs
}

func (p InferenceProvider) validate(key string) []error {
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

func (m InferenceModel) validate(key string, providers map[string]bool) []error {
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
	case "", ModelActive, ModelDeprecated, ModelRetired:
	default:
		errs = append(errs, fmt.Errorf("%s.status: %q is not one of active, deprecated, retired", key, m.Status))
	}
	p := m.Prices
	if !validPrice(p.InputPerMillion) || !validPrice(p.OutputPerMillion) || (p.CachedInputPerMillion != nil && !validPrice(*p.CachedInputPerMillion)) {
		errs = append(errs, fmt.Errorf("%s.prices: prices must be finite and not negative (USD per million tokens)", key))
	}
	return errs
}

// validPrice also refuses NaN, which no comparison catches.
func validPrice(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }
