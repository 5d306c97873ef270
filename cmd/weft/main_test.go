package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/chfront"
)

// TestMain shuts down the embedded ClickHouse engine the ClickHouse tests
// share.
func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }

// runWeft runs the CLI in-process with the given environment and returns
// its stdout.
func runWeft(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, &stdout, &stderr, func(k string) string { return env[k] })
	if err != nil {
		t.Logf("weft %v: stderr:\n%s", args, stderr.String())
	}
	return stdout.String(), err
}

func mustRunWeft(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, err := runWeft(t, env, args...)
	if err != nil {
		t.Fatalf("weft %v: %v", args, err)
	}
	return out
}

// writeConfig writes a weft.yaml and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// clickhouseDSN returns the DSN of a fresh database on the embedded
// ClickHouse.
func clickhouseDSN(t *testing.T) string {
	t.Helper()
	srv := chfront.StartForTest(t)
	return srv.URL() + "/" + chfront.NewTestDatabase(t, srv)
}
