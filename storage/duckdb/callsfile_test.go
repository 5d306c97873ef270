package duckdb

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestOpenMovesCallsOutOfTheMainFile opens a data dir written when calls
// lived in weft.duckdb: they are readable afterwards, from calls.duckdb.
func TestOpenMovesCallsOutOfTheMainFile(t *testing.T) {
	dir := t.TempDir()
	legacy, err := sql.Open("duckdb", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"migrations/0001_calls.sql", "migrations/0008_calls_renamed.sql"} {
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := legacy.Exec(string(body)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := legacy.Exec(`INSERT INTO calls (project_id, id, has_start, trace_id, op_name, started_at, renamed)
		VALUES ('e/p', 'c1', true, 't1', 'op', now(), true)`); err != nil {
		t.Fatal(err)
	}
	if err := legacy.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second open finds the move done
		s, err := Open(context.Background(), dir, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for c, err := range s.QueryCalls(context.Background(), storage.CallsQuery{ProjectID: "e/p"}) {
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != "c1" || c.TraceID != "t1" {
				t.Errorf("moved call reads back as %+v", c)
			}
			n++
		}
		if n != 1 {
			t.Errorf("%d calls after the move, want 1", n)
		}
		var left int
		if err := s.db.QueryRow("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'weft' AND table_name = 'calls'").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Error("the calls table is still in the main file")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckpointCallsWhileReading: checkpoints of unlogged calls run
// between writes while readers stream calls, and no read fails.
func TestCheckpointCallsWhileReading(t *testing.T) {
	s, err := OpenWithOptions(context.Background(), t.TempDir(), Options{CallsUnlogged: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gen := newOTelBenchGen()
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for r := range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "bench/otel", Limit: int64(1000 + r)}) {
					if err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	for n := range 30 {
		if _, err := s.WriteCallOps(ctx, gen.batch(n, 1000, time.Now().UTC())); err != nil {
			t.Fatal(err)
		}
		if n%3 == 0 {
			if err := s.CheckpointCalls(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM calls").Scan(&n); err != nil || n != 30_000 {
		t.Errorf("%d calls stored (%v), want 30000", n, err)
	}
}
