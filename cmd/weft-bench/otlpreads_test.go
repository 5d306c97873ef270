package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestOTLPLoadThenReads runs the OTLP workload with its reads against a
// real weft, small: every read must answer 200 with a body, so the ids
// regenerated for call/read and the trace read must be the ones sent, and
// every request shape must be one the server accepts.
func TestOTLPLoadThenReads(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "weft")
	if out, err := exec.Command("go", "build", "-o", bin, "../weft").CombinedOutput(); err != nil {
		t.Fatalf("go build ../weft: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := run(ctx, []string{"otlp", "--weft", bin, "--calls", "3000", "--batch", "100", "--workers", "2",
		"--transports", "http", "--window", "1000", "--reads", "--queries", "2"})
	if err != nil {
		t.Fatal(err)
	}
}
