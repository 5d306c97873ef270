package clickhouse

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/chfront"
)

func embeddedMigrations(t *testing.T) []string {
	t.Helper()
	paths, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil || len(paths) == 0 {
		t.Fatalf("embedded migrations: %v, %v", paths, err)
	}
	for i, p := range paths {
		paths[i] = strings.TrimPrefix(p, "migrations/")
	}
	slices.Sort(paths)
	return paths
}

func TestMigrateIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{})
	mustWrite(t, s, startOp("e/p", "a", "", t0))
	for i := range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("Migrate run %d: %v", i+2, err)
		}
	}
	got, err := s.AppliedMigrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := embeddedMigrations(t); !slices.Equal(got, want) {
		t.Errorf("applied %v; want %v", got, want)
	}
	if n := scalar[uint64](t, s, "SELECT count() FROM "+migrationsTable+" FINAL"); n != uint64(len(got)) {
		t.Errorf("%d migration records; want one per file", n)
	}
	if got := readAll(t, s, "e/p"); len(got) != 1 {
		t.Errorf("re-migrating lost calls: %v", got)
	}
}

// TestMigrateRerunsUnrecordedFile re-applies a file whose record is
// missing, as after a crash between its statements and its record.
func TestMigrateRerunsUnrecordedFile(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{})
	mustWrite(t, s, startOp("e/p", "a", "", t0))
	if err := s.conn.Exec(ctx, "TRUNCATE TABLE "+migrationsTable); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate over an existing schema: %v", err)
	}
	if got, _ := s.AppliedMigrations(ctx); len(got) != len(embeddedMigrations(t)) {
		t.Errorf("applied %v after re-run", got)
	}
	if got := readAll(t, s, "e/p"); len(got) != 1 {
		t.Errorf("re-running migrations lost calls: %v", got)
	}
}

func TestMigrateCreatesDatabase(t *testing.T) {
	ctx := context.Background()
	srv := chfront.StartForTest(t)
	// A name of the test's own, dropped again: the helper's cleanup drops
	// whatever Migrate creates.
	name := chfront.NewTestDatabase(t, srv)
	if err := srv.Exec(ctx, "DROP DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, srv.URL()+"/"+name, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate into a missing database: %v", err)
	}
	mustWrite(t, s, startOp("e/p", "a", "", t0))
	if n := scalar[uint64](t, s, "SELECT count() FROM calls"); n != 1 {
		t.Errorf("%d calls in the created database", n)
	}
}

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"one", "CREATE TABLE a (x String);", []string{"CREATE TABLE a (x String)"}},
		{"two with comments", "-- head; not a split\nCREATE TABLE a (x String); -- tail\n\nSELECT 1;\n",
			[]string{"CREATE TABLE a (x String)", "SELECT 1"}},
		{"semicolons in quotes", "SELECT 'a;b', \"c;d\", `e;f`; SELECT 'it''s;', 'x\\';y'",
			[]string{"SELECT 'a;b', \"c;d\", `e;f`", "SELECT 'it''s;', 'x\\';y'"}},
		{"comment markers in strings", "SELECT '--x'; SELECT 2", []string{"SELECT '--x'", "SELECT 2"}},
		{"empty", " ;\n-- only a comment\n;", nil},
	}
	for _, tt := range tests {
		if got := splitStatements(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q; want %q", tt.name, got, tt.want)
		}
	}
}
