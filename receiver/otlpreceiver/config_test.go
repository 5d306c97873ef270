package otlpreceiver

import (
	"strings"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"zero is valid", Config{}, ""},
		{"defaults are valid", NewDefaultConfig(), ""},
		{"negative bytes", Config{MaxRequestBytes: -1}, "max_request_bytes"},
		{"negative values", Config{MaxAttributeValueBytes: -1, RetryAfter: -time.Second}, "retry_after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.err)
			}
		})
	}
	got := Config{MaxSpansPerRequest: 7}.withDefaults()
	want := NewDefaultConfig()
	want.MaxSpansPerRequest = 7
	if got != want {
		t.Errorf("withDefaults = %+v, want %+v", got, want)
	}
}
