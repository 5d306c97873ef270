package forwardexporter

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Config shapes the agent. Its YAML keys live under `agent:` in
// weft.yaml.
type Config struct {
	// Upstream is the central Weft's base URL (http://host:6345), which
	// serves the Weave API of its ingest role. Empty: forward to Kafka
	// (kafka_brokers) instead.
	Upstream string `yaml:"upstream"`
	// APIKey is sent upstream for requests that arrive without a key, so
	// applications next to the agent need none. Requests that carry a key
	// are forwarded under their own.
	APIKey string `yaml:"api_key"`
	// BufferDir holds the buffer's files. Default <data_dir>/buffer.
	BufferDir string `yaml:"buffer_dir"`
	// MaxBufferBytes bounds the buffer's files on disk; beyond it writes
	// get 429. Default 512 MiB.
	MaxBufferBytes int64 `yaml:"max_buffer_bytes"`
	// MaxBatchOps is the most call records in one upstream request.
	// Default 1000.
	MaxBatchOps int `yaml:"max_batch_ops"`
	// MaxBatchBytes bounds the buffered bytes gathered into one upstream
	// request. Default 4 MiB.
	MaxBatchBytes int64 `yaml:"max_batch_bytes"`
	// MaxInFlight is the most upstream requests at once (never two for
	// the same call). Default 4.
	MaxInFlight int `yaml:"max_in_flight"`
	// RequestTimeout bounds one upstream request. Default 30s.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// RetryBackoffMin and RetryBackoffMax bound the pause between
	// attempts while the upstream fails. Defaults 100ms and 10s.
	RetryBackoffMin time.Duration `yaml:"retry_backoff_min"`
	RetryBackoffMax time.Duration `yaml:"retry_backoff_max"`
	// MaxRetryAfter caps how long an upstream's Retry-After is honoured.
	// Default 60s.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxBufferBytes:  512 << 20,
		MaxBatchOps:     1000,
		MaxBatchBytes:   4 << 20,
		MaxInFlight:     4,
		RequestTimeout:  30 * time.Second,
		RetryBackoffMin: 100 * time.Millisecond,
		RetryBackoffMax: 10 * time.Second,
		MaxRetryAfter:   time.Minute,
	}
}

// minBufferBytes keeps room for a few segments and one large request.
const minBufferBytes = 4 << 20

// Validate reports the first setting that cannot work, naming its key.
func (c Config) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	if c.Upstream != "" {
		u, err := url.Parse(c.Upstream)
		check(err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "",
			"agent.upstream: %q is not an http:// or https:// URL of a Weft ingest role", c.Upstream)
	}
	check(c.BufferDir == "", "agent.buffer_dir: must not be empty")
	check(c.MaxBufferBytes < minBufferBytes, "agent.max_buffer_bytes: must be at least %d (4 MiB)", minBufferBytes)
	check(c.MaxBatchOps < 1, "agent.max_batch_ops: must be at least 1")
	check(c.MaxBatchBytes < 1024, "agent.max_batch_bytes: must be at least 1024")
	check(c.MaxInFlight < 1, "agent.max_in_flight: must be at least 1")
	check(c.RequestTimeout <= 0, "agent.request_timeout: must be positive")
	check(c.RetryBackoffMin <= 0 || c.RetryBackoffMax < c.RetryBackoffMin,
		"agent.retry_backoff_min: must be positive and at most agent.retry_backoff_max")
	check(c.MaxRetryAfter < 0, "agent.max_retry_after: must not be negative")
	return errors.Join(errs...)
}

// segmentBytes sizes the buffer's files so that trimming, which frees
// whole files, keeps the disk close to what is still owed upstream.
func (c Config) segmentBytes() int64 {
	return max(1<<20, min(c.MaxBufferBytes/16, 32<<20))
}
