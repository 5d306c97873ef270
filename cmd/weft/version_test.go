package main

import (
	"strings"
	"testing"

	"github.com/weftdev/weft/app"
)

func TestBuildFactsString(t *testing.T) {
	tests := []struct {
		name  string
		facts buildFacts
		want  string
	}{
		{"clean commit", buildFacts{Version: "1.2.3", Commit: "abc123", BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"},
			"weft 1.2.3 (commit abc123, built 2026-01-02T03:04:05Z, go1.26.8)"},
		{"uncommitted changes", buildFacts{Version: "1.2.3", Commit: "abc123", Modified: true, BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"},
			"weft 1.2.3 (commit abc123-modified, built 2026-01-02T03:04:05Z, go1.26.8)"},
		{"outside a checkout", buildFacts{Version: "1.2.3", Commit: "unknown", BuildDate: "unknown", GoVersion: "go1.26.8"},
			"weft 1.2.3 (commit unknown, built unknown, go1.26.8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.facts.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionCommand checks that `weft version` names the release and the
// toolchain. A test binary carries no VCS stamp; the image test checks the
// commit of a real build.
func TestVersionCommand(t *testing.T) {
	out := mustRunWeft(t, nil, "version")
	if !strings.HasPrefix(out, "weft "+app.Version+" (commit ") || !strings.Contains(out, "go1.") {
		t.Fatalf("weft version = %q", out)
	}
}
