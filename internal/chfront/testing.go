package chfront

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// shared is the engine of a test binary. libchdb allows one engine per
// process, so every test in the binary shares it; RunTests owns its life so
// it is shut down before the process exits.
var shared struct {
	mu      sync.Mutex
	running bool // RunTests is in charge
	booted  bool
	srv     *Server
	dir     string
	err     error
	dbSeq   atomic.Int64
}

// RunTests runs the tests of a package that uses StartForTest and shuts the
// shared engine down afterwards. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }
func RunTests(m *testing.M) int {
	shared.mu.Lock()
	shared.running = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "chfront:", err)
			code = max(code, 1)
		}
		shared.srv = nil
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	shared.running = false
	return code
}

// StartForTest returns the test binary's server, booting it on first use on a
// fresh temporary directory. The test fails if libchdb is missing (run
// scripts/install-libchdb.sh) or if TestMain does not call RunTests.
func StartForTest(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.running {
		t.Fatal("chfront.StartForTest needs TestMain to call chfront.RunTests: " +
			"func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }")
	}
	if !shared.booted {
		shared.booted = true
		shared.srv, shared.dir, shared.err = bootShared()
	}
	if shared.err != nil {
		t.Fatalf("start ClickHouse front end: %v", shared.err)
	}
	return shared.srv
}

func bootShared() (*Server, string, error) {
	dir, err := os.MkdirTemp("", "weft-chdb-test-")
	if err != nil {
		return nil, "", err
	}
	// Test output stays quiet; failures surface as errors to the tests.
	srv, err := StartConfig(context.Background(), Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	return srv, dir, nil
}

var unsafeName = regexp.MustCompile(`[^a-z0-9_]+`)

// NewTestDatabase creates a database of its own for the calling test and
// drops it when the test ends, so tests sharing the engine stay apart.
func NewTestDatabase(t testing.TB, s *Server) string {
	t.Helper()
	name := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	name = fmt.Sprintf("t_%.40s_%d", name, shared.dbSeq.Add(1))
	ctx := context.Background()
	if err := s.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return name
}
