package config

import (
	"strings"
	"testing"
	"time"
)

// TestBudgetSharingSettings: the settings that share the in-flight byte
// budget between keys, pace bodies, and cap a key's gateway requests are
// read from the file, default as documented, and refused, named, when
// they cannot work.
func TestBudgetSharingSettings(t *testing.T) {
	def := Default()
	if c := def.Connections; c.MaxInflightBytesPerKey != 0 || c.MinBodyRate != 64<<10 || c.BodyRateGrace != 5*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	if def.Inference.MaxConcurrentPerKey != 256 {
		t.Fatalf("inference.max_concurrent_per_key default = %d", def.Inference.MaxConcurrentPerKey)
	}
	file := writeFile(t, "connections:\n  max_inflight_bytes_per_key: 2097152\n  min_body_rate: 0\n  body_rate_grace: 2s\ninference:\n  max_concurrent_per_key: 8\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Connections; c.MaxInflightBytesPerKey != 2<<20 || c.MinBodyRate != 0 || c.BodyRateGrace != 2*time.Second || cfg.Inference.MaxConcurrentPerKey != 8 {
		t.Fatalf("read %+v, inference.max_concurrent_per_key %d", c, cfg.Inference.MaxConcurrentPerKey)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"connections:\n  max_inflight_bytes_per_key: 1000\n", "connections.max_inflight_bytes_per_key"},
		{"connections:\n  max_inflight_bytes_per_key: 33554432\n", "connections.max_inflight_bytes_per_key"},
		{"connections:\n  min_body_rate: -1\n", "connections.min_body_rate"},
		{"connections:\n  body_rate_grace: 0s\n", "connections.body_rate_grace"},
		{"inference:\n  max_concurrent_per_key: 0\n", "inference.max_concurrent_per_key"},
	} {
		if _, err := Load([]string{"--config", writeFile(t, tc.yaml)}, env(nil)); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
}
