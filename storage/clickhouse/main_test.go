package clickhouse

import (
	"context"
	"os"
	"testing"

	"github.com/weftdev/weft/internal/chfront"
)

func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }

// testDSN returns the HTTP DSN of a fresh, empty database of its own.
func testDSN(t testing.TB) string {
	t.Helper()
	srv := chfront.StartForTest(t)
	return srv.URL() + "/" + chfront.NewTestDatabase(t, srv)
}

// openTestStore opens a migrated store on a fresh database.
func openTestStore(t *testing.T, opts Options) *Store { return openTestStoreTB(t, opts) }

func openTestStoreTB(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), testDSN(t), opts, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}
