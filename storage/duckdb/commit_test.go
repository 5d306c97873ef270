package duckdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestFailedCommitFailsTheStore makes a real COMMIT of updated calls fail
// for memory, as a pool filled by reads did under the stress test. On
// DuckDB 1.5.6 the rows it updated then point at freed memory, and a read
// of them dies natively (duckdb/duckdb#26019). The store must not read
// them: every read, write and checkpoint of calls answers unavailable,
// Failed reports the cause, and Close leaves the database alone.
func TestFailedCommitFailsTheStore(t *testing.T) {
	ctx := context.Background()
	s, err := OpenWithOptions(ctx, t.TempDir(), Options{CallsUnlogged: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	writeCallStarts(t, s, 5000, func(i int) storage.Call {
		return storage.Call{ProjectID: "e/p", ID: fmt.Sprintf("c%05d", i), TraceID: "t", OpName: "op", StartedAt: base.Add(time.Duration(i) * time.Millisecond)}
	})
	if err := s.CheckpointCalls(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{
		"SET GLOBAL temp_directory = '" + t.TempDir() + "'",
		"BEGIN TRANSACTION",
		"UPDATE calls SET display_name = repeat('b', 100)",
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// The pool shrinks below what the transaction holds, as reads beside
	// it filled it: the smallest pool DuckDB can evict down to leaves the
	// commit no room to pin its undo buffer.
	var used int64
	if err := conn.QueryRowContext(ctx, "SELECT sum(memory_usage_bytes) FROM duckdb_memory()").Scan(&used); err != nil {
		t.Fatal(err)
	}
	for limit := used; ; limit = limit * 9 / 10 {
		_, err := conn.ExecContext(ctx, fmt.Sprintf("SET GLOBAL memory_limit = '%dB'", limit))
		if err != nil || limit < 1<<20 {
			break
		}
	}
	err = s.commitCalls(ctx, conn)
	if err == nil {
		t.Fatal("the commit succeeded in a 1 MB pool; the test no longer makes it fail")
	}
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("failed commit: %v, want an error wrapping ErrUnavailable", err)
	}
	// The reads that filled the pool end: memory is no longer short.
	if _, err := s.db.ExecContext(ctx, "SET GLOBAL memory_limit = '256MB'"); err != nil {
		t.Fatal(err)
	}
	select {
	case ferr := <-s.Failed():
		if ferr == nil {
			t.Fatal("Failed closed without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Failed did not report the failed commit")
	}

	// Reads first: without the failure they would read the rows.
	for _, c := range []struct {
		name string
		try  func() error
	}{
		{"a paged read", func() error {
			for _, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p"}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"a page", func() error {
			for _, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p", Limit: 10}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"a write", func() error {
			_, err := s.WriteCallOps(ctx, []storage.CallOp{{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c00001", DisplayName: "x"}}})
			return err
		}},
		{"a checkpoint", func() error { return s.CheckpointCalls(ctx) }},
		{"retention", func() error {
			_, err := s.ExpireCalls(ctx, storage.Retention{Default: time.Hour}, time.Now())
			return err
		}},
		{"close", s.Close},
	} {
		if err := c.try(); !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s after the failed commit: %v, want an error wrapping ErrUnavailable", c.name, err)
		}
	}
}
