package inference

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

// Config is the gateway's section of the configuration file
// (inference:): the upstream servers it forwards to, the models clients
// may name, and the bounds that protect the gateway and the upstreams.
type Config struct {
	// Providers are OpenAI-compatible servers; names are unique.
	Providers []catalog.ProviderConfig `yaml:"providers"`
	// Models are what clients send as `model` and /v1/models lists.
	Models []catalog.ModelConfig `yaml:"models"`
	// LoRA names the upstreams that serve trained checkpoints' adapters.
	LoRA LoRAConfig `yaml:"lora"`
	// MaxConcurrentPerProject caps the requests in flight per project;
	// beyond it clients get 429 with Retry-After. 256.
	MaxConcurrentPerProject int `yaml:"max_concurrent_per_project"`
	// ProjectConcurrency overrides the cap per "entity/project".
	ProjectConcurrency map[string]int `yaml:"project_concurrency"`
	// MaxConcurrentPerKey caps the requests in flight per API key, over
	// all the projects it names, so naming more projects does not multiply
	// the per-project cap; beyond it clients get 429 with Retry-After. 256.
	MaxConcurrentPerKey int `yaml:"max_concurrent_per_key"`
	// RetryAfter is what 429 and 5xx answers tell clients to wait. 1s.
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
	// MaxResponseBytes caps an unstreamed answer, one stream event and
	// the output assembled from a stream for its trace. 8 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// TraceQueueCalls and TraceQueueBytes bound the traced calls waiting
	// for the ingest pipeline; beyond them calls are dropped and counted.
	TraceQueueCalls int   `yaml:"trace_queue_calls"`
	TraceQueueBytes int64 `yaml:"trace_queue_bytes"`
	// Routing is retries, the circuit breaker, the response cache and
	// alias following (routeconfig.go).
	RoutingConfig `yaml:",inline"`

	// Limits and Budgets are the rate limits and spend caps in force
	// until the admin API (/inference/limits) stores others; see
	// limits_config.go. LimitsSyncInterval is how often replicas share
	// their rate counts (1s); BudgetsInterval how often spend is read
	// from the recorded calls (10s).
	Limits             []LimitRule   `yaml:"limits"`
	Budgets            []BudgetRule  `yaml:"budgets"`
	LimitsSyncInterval time.Duration `yaml:"limits_sync_interval"`
	BudgetsInterval    time.Duration `yaml:"budgets_interval"`
}

// LoRAConfig is where chat requests naming a checkpoint
// (wandb-artifact:///<entity>/<project>/<name>:<alias>) go: servers that
// load LoRA adapters and serve each under its name, which is
// <entity>/<project>/<name>:step<N>.
type LoRAConfig struct {
	Upstreams []catalog.UpstreamConfig `yaml:"upstreams"`
}

// DefaultConfig returns the documented defaults, with no providers.
func DefaultConfig() Config {
	return Config{
		MaxConcurrentPerProject: 256,
		MaxConcurrentPerKey:     256,
		RetryAfter:              time.Second,
		ConnectTimeout:          10 * time.Second,
		Timeout:                 10 * time.Minute,
		StreamIdleTimeout:       2 * time.Minute,
		MaxRequestBytes:         8 << 20,
		MaxResponseBytes:        8 << 20,
		TraceQueueCalls:         10000,
		TraceQueueBytes:         64 << 20,
		RoutingConfig:           defaultRoutingConfig(),
		LimitsSyncInterval:      time.Second,
		BudgetsInterval:         10 * time.Second,
	}
}

// Validate reports every setting that cannot work, naming its key.
func (c Config) Validate() error {
	errs := c.validateBounds()
	errs = append(errs, c.RoutingConfig.validate()...)
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, catalog.Validate(c.Providers, c.Models)...)
	for j, u := range c.LoRA.Upstreams {
		if !c.hasProvider(u.Provider) {
			errs = append(errs, fmt.Errorf("inference.lora.upstreams[%d].provider: %q is not a name in inference.providers", j, u.Provider))
		}
	}
	return errors.Join(errs...)
}

func (c Config) hasProvider(name string) bool {
	for _, p := range c.Providers {
		if p.Name == name {
			return true
		}
	}
	return false
}

func (c Config) validateBounds() []error {
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
	}{{"max_concurrent_per_project", int64(c.MaxConcurrentPerProject), 1}, {"max_concurrent_per_key", int64(c.MaxConcurrentPerKey), 1},
		{"max_request_bytes", c.MaxRequestBytes, 1024},
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
