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
	// disk, are not counted. 16 MiB.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
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
		{"grpc_keepalive_min_time", c.GRPCKeepaliveMinTime},
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
	if c.GRPCMaxConcurrentStreams < 1 {
		errs = append(errs, fmt.Errorf("connections.grpc_max_concurrent_streams: %d must be at least 1", c.GRPCMaxConcurrentStreams))
	}
	return errs
}
