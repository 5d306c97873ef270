package config

import (
	"fmt"
	"time"
)

// Connections bounds what one client connection may hold, on the HTTP
// listener and the OTLP/gRPC one alike.
type Connections struct {
	// ReadHeaderTimeout bounds reading a request's headers. 10s.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, body included; a body
	// sent slower is cut off. File uploads extend it while content keeps
	// arriving. 60s.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds handling a request and writing its answer.
	// Streaming answers (/calls/stream_query, /file/content, ...) extend it
	// while they make progress. 120s.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes keep-alive HTTP connections, and gRPC connections
	// without calls, idle this long. 120s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConnections caps the open connections of each listener; more wait
	// in the kernel's accept queue. 1024.
	MaxConnections int `yaml:"max_connections"`
	// GRPCMaxConcurrentStreams caps the calls in flight on one gRPC
	// connection. 100.
	GRPCMaxConcurrentStreams uint32 `yaml:"grpc_max_concurrent_streams"`
	// GRPCKeepaliveMinTime is the shortest interval a gRPC client may
	// ping at; one pinging more often is disconnected. 10s.
	GRPCKeepaliveMinTime time.Duration `yaml:"grpc_keepalive_min_time"`
	// MaxInflightBytes bounds the request bytes held at once across all
	// HTTP requests (compressed bodies count four times) and OTLP/gRPC
	// messages; beyond it requests get 429 with Retry-After (gRPC:
	// RESOURCE_EXHAUSTED with RetryInfo). File uploads, which stream to
	// disk, are not counted. Bodies count as they arrive, and stay
	// counted until answered (gateway requests: until the upstream
	// answered and the call was traced). 16 MiB.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`

	// How the in-flight budget is shared, and how fast a body must come
	// (the whole rule: httpapi.Inflight).

	// MaxInflightBytesPerKey is the most of max_inflight_bytes the
	// requests of one API key hold at once (requests without a key share
	// one such share); beyond it that key gets 429 with Retry-After while
	// the others go on. A single body larger than the share passes once
	// it alone holds it. 0: a quarter of max_inflight_bytes.
	MaxInflightBytesPerKey int64 `yaml:"max_inflight_bytes_per_key"`
	// MinBodyRate is the average rate, in bytes a second, a counted
	// request body must arrive at once BodyRateGrace has passed since its
	// first byte was read; a slower one is cut off with 408. 0: no
	// minimum (read_timeout alone applies). 65536.
	MinBodyRate int64 `yaml:"min_body_rate"`
	// BodyRateGrace is how long a body may take before MinBodyRate
	// applies. 5s.
	BodyRateGrace time.Duration `yaml:"body_rate_grace"`
}

// DefaultConnections returns the documented defaults.
func DefaultConnections() Connections {
	return Connections{
		ReadHeaderTimeout:        10 * time.Second,
		ReadTimeout:              60 * time.Second,
		WriteTimeout:             120 * time.Second,
		IdleTimeout:              120 * time.Second,
		MaxConnections:           1024,
		GRPCMaxConcurrentStreams: 100,
		GRPCKeepaliveMinTime:     10 * time.Second,
		MaxInflightBytes:         16 << 20,
		MinBodyRate:              64 << 10,
		BodyRateGrace:            5 * time.Second,
	}
}

func (c Connections) validate() []error {
	var errs []error
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"read_header_timeout", c.ReadHeaderTimeout}, {"read_timeout", c.ReadTimeout},
		{"write_timeout", c.WriteTimeout}, {"idle_timeout", c.IdleTimeout},
		{"grpc_keepalive_min_time", c.GRPCKeepaliveMinTime}, {"body_rate_grace", c.BodyRateGrace},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("connections.%s: %s must be positive", d.key, d.v))
		}
	}
	if c.MaxConnections < 1 {
		errs = append(errs, fmt.Errorf("connections.max_connections: %d must be at least 1", c.MaxConnections))
	}
	if c.MaxInflightBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("connections.max_inflight_bytes: %d must be at least 1048576 (1 MiB)", c.MaxInflightBytes))
	}
	if n := c.MaxInflightBytesPerKey; n != 0 && (n < 64<<10 || n > c.MaxInflightBytes) {
		errs = append(errs, fmt.Errorf("connections.max_inflight_bytes_per_key: %d must be 0 (a quarter of max_inflight_bytes) or from 65536 to max_inflight_bytes (%d)", n, c.MaxInflightBytes))
	}
	if c.MinBodyRate < 0 {
		errs = append(errs, fmt.Errorf("connections.min_body_rate: %d must be 0 (no minimum) or more", c.MinBodyRate))
	}
	if c.GRPCMaxConcurrentStreams < 1 {
		errs = append(errs, fmt.Errorf("connections.grpc_max_concurrent_streams: %d must be at least 1", c.GRPCMaxConcurrentStreams))
	}
	return errs
}
