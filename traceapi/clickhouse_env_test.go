package traceapi_test

import (
	"context"
	"os"
	"testing"

	"github.com/weftdev/weft/internal/chfront"
	"github.com/weftdev/weft/storage/clickhouse"
)

// TestMain shuts the ClickHouse engine the tests share down after they
// ran; tests that never open a ClickHouse store never boot it.
func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }

// openClickHouse opens a migrated ClickHouse store on a fresh database of
// the test binary's engine (WEFT_LIBCHDB names libchdb).
func openClickHouse(t testing.TB) *clickhouse.Store {
	t.Helper()
	srv := chfront.StartForTest(t)
	s, err := clickhouse.Open(context.Background(), srv.URL()+"/"+chfront.NewTestDatabase(t, srv), clickhouse.Options{}, nil)
	if err != nil {
		t.Fatalf("open ClickHouse store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate ClickHouse store: %v", err)
	}
	return s
}
