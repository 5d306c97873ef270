package otlpreceiver

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Config.
const (
	// DefaultMaxRequestBytes bounds a request body after decompression.
	DefaultMaxRequestBytes = 20 << 20
	// DefaultMaxSpansPerRequest is well above what exporters batch
	// (the SDKs send 512 spans, the Collector's batcher 8192).
	DefaultMaxSpansPerRequest = 20_000
	// DefaultMaxAttributeValueBytes cuts larger attribute values.
	DefaultMaxAttributeValueBytes = 1 << 20
	// DefaultRetryAfter is the delay advertised on overload and shutdown.
	DefaultRetryAfter = time.Second
)

// Config holds the receiver's limits. A zero field takes its default.
type Config struct {
	// MaxRequestBytes is the largest accepted request body, counted after
	// decompression (which also bounds gzip bombs). Larger requests get
	// HTTP 413 / gRPC RESOURCE_EXHAUSTED. Default 20 MiB.
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxSpansPerRequest is the most spans one request may carry; more get
	// 413 / RESOURCE_EXHAUSTED. Default 20,000.
	MaxSpansPerRequest int `yaml:"max_spans_per_request"`
	// MaxAttributeValueBytes cuts string and bytes attribute values longer
	// than this; the call lists them under attributes.weft.truncated.
	// Default 1 MiB.
	MaxAttributeValueBytes int `yaml:"max_attribute_value_bytes"`
	// RetryAfter is sent as Retry-After (rounded up to whole seconds) and
	// as gRPC RetryInfo when the pipeline is full or stopping. Default 1s.
	RetryAfter time.Duration `yaml:"retry_after"`
}

// NewDefaultConfig returns a Config with every default set.
func NewDefaultConfig() Config {
	return Config{
		MaxRequestBytes:        DefaultMaxRequestBytes,
		MaxSpansPerRequest:     DefaultMaxSpansPerRequest,
		MaxAttributeValueBytes: DefaultMaxAttributeValueBytes,
		RetryAfter:             DefaultRetryAfter,
	}
}

// Validate rejects negative limits; zero means "use the default".
func (c Config) Validate() error {
	var errs []error
	if c.MaxRequestBytes < 0 {
		errs = append(errs, fmt.Errorf("otlp.max_request_bytes: %d must not be negative", c.MaxRequestBytes))
	}
	if c.MaxSpansPerRequest < 0 {
		errs = append(errs, fmt.Errorf("otlp.max_spans_per_request: %d must not be negative", c.MaxSpansPerRequest))
	}
	if c.MaxAttributeValueBytes < 0 {
		errs = append(errs, fmt.Errorf("otlp.max_attribute_value_bytes: %d must not be negative", c.MaxAttributeValueBytes))
	}
	if c.RetryAfter < 0 {
		errs = append(errs, fmt.Errorf("otlp.retry_after: %s must not be negative", c.RetryAfter))
	}
	return errors.Join(errs...)
}

// withDefaults fills zero (and, defensively, negative) fields.
func (c Config) withDefaults() Config {
	d := NewDefaultConfig()
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = d.MaxRequestBytes
	}
	if c.MaxSpansPerRequest <= 0 {
		c.MaxSpansPerRequest = d.MaxSpansPerRequest
	}
	if c.MaxAttributeValueBytes <= 0 {
		c.MaxAttributeValueBytes = d.MaxAttributeValueBytes
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = d.RetryAfter
	}
	return c
}
