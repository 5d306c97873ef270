package inference

import (
	"fmt"
	"time"
)

// RoutingConfig is the part of the gateway's configuration that spreads
// requests over upstreams and spares them work: retries, the circuit
// breaker, the response cache and alias following (inference:, inline).
type RoutingConfig struct {
	Retry   RetryConfig   `yaml:"retry"`
	Breaker BreakerConfig `yaml:"breaker"`
	Cache   CacheConfig   `yaml:"cache"`
	// AliasRefresh is how often the versions of followed aliases are
	// read again, as a backstop to the alias events. 5s.
	AliasRefresh time.Duration `yaml:"alias_refresh"`
}

// RetryConfig bounds retries of an upstream that failed before its first
// byte with a status worth retrying (429, 408, 500, 502, 503, 504) or
// without an answer. Failing over to an upstream not yet tried is no
// retry and needs no pause.
type RetryConfig struct {
	// MaxRetries caps the attempts beyond one per upstream. 2.
	MaxRetries int `yaml:"max_retries"`
	// Backoff is the first pause, doubled per retry up to MaxBackoff,
	// jittered. 100ms, 2s.
	Backoff    time.Duration `yaml:"backoff"`
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter is the longest upstream Retry-After waited for; a
	// longer one ends the retries. 5s.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// MaxElapsed bounds the time from the first attempt to the start of
	// a retry. 15s.
	MaxElapsed time.Duration `yaml:"max_elapsed"`
}

// BreakerConfig is when an upstream is taken out of rotation.
type BreakerConfig struct {
	// Failures is the count of consecutive failed attempts (no answer or
	// a 5xx) that opens the breaker. 5.
	Failures int `yaml:"failures"`
	// CoolDown is how long an open breaker waits before one probe. 30s.
	CoolDown time.Duration `yaml:"cool_down"`
}

// CacheConfig bounds the response cache that models with cache: true (or
// requests with x-weft-cache: true) use.
type CacheConfig struct {
	// MaxBytes bounds the cached answers; 0 turns the cache off. 64 MiB.
	MaxBytes int64 `yaml:"max_bytes"`
	// TTL is how long an answer is served from the cache. 10m.
	TTL time.Duration `yaml:"ttl"`
}

func defaultRoutingConfig() RoutingConfig {
	return RoutingConfig{
		Retry: RetryConfig{MaxRetries: 2, Backoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second,
			MaxRetryAfter: 5 * time.Second, MaxElapsed: 15 * time.Second},
		Breaker:      BreakerConfig{Failures: 5, CoolDown: 30 * time.Second},
		Cache:        CacheConfig{MaxBytes: 64 << 20, TTL: 10 * time.Minute},
		AliasRefresh: 5 * time.Second,
	}
}

func (c RoutingConfig) validate() []error {
	var errs []error
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"retry.backoff", c.Retry.Backoff}, {"retry.max_backoff", c.Retry.MaxBackoff}, {"retry.max_retry_after", c.Retry.MaxRetryAfter},
		{"retry.max_elapsed", c.Retry.MaxElapsed}, {"breaker.cool_down", c.Breaker.CoolDown}, {"cache.ttl", c.Cache.TTL},
		{"alias_refresh", c.AliasRefresh}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("inference.%s: %s must be positive", d.key, d.v))
		}
	}
	if c.Retry.MaxBackoff < c.Retry.Backoff {
		errs = append(errs, fmt.Errorf("inference.retry.max_backoff: %s must be at least inference.retry.backoff (%s)", c.Retry.MaxBackoff, c.Retry.Backoff))
	}
	if c.Retry.MaxRetries < 0 || c.Retry.MaxRetries > 10 {
		errs = append(errs, fmt.Errorf("inference.retry.max_retries: %d must be between 0 (no retries) and 10", c.Retry.MaxRetries))
	}
	if c.Breaker.Failures < 1 {
		errs = append(errs, fmt.Errorf("inference.breaker.failures: %d must be at least 1", c.Breaker.Failures))
	}
	if c.Cache.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("inference.cache.max_bytes: %d must not be negative (0 turns the cache off)", c.Cache.MaxBytes))
	}
	return errs
}
