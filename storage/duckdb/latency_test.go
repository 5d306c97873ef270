package duckdb

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestStoredLatency: latency_ms holds what epoch_ms(ended_at) -
// epoch_ms(started_at) reads, however a call's parts arrive (whole, start
// then end, end then start, a rename before either); rows of an older
// store get it when the store opens; and a page sorted by latency, read
// bounded by the stored column, is the page the whole sort gives.
func TestStoredLatency(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 987654321, time.UTC)
	var whole, starts, ends, renames []storage.CallOp
	const n = 200
	for i := range n {
		id := fmt.Sprintf("c%03d", i)
		started := t0.Add(time.Duration(i) * 1500 * time.Microsecond)
		ended := started.Add(time.Duration(i%9)*time.Millisecond + time.Duration(i)*333*time.Nanosecond)
		call := storage.Call{ProjectID: "e/p", ID: id, TraceID: "t" + id, OpName: "op", StartedAt: started}
		end := storage.Call{ProjectID: "e/p", ID: id, EndedAt: &ended, Summary: []byte(`{}`)}
		switch i % 5 {
		case 0: // whole
			c := call
			c.EndedAt = end.EndedAt
			whole = append(whole, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}})
		case 1: // start, then end
			starts = append(starts, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: call}})
			ends = append(ends, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: end}})
		case 2: // end, then start
			ends = append([]storage.CallOp{{Part: &storage.CallPart{Kind: storage.PartEnd, Call: end}}}, ends...)
			starts = append(starts, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: call}})
		case 3: // still running
			starts = append(starts, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: call}})
		case 4: // renamed before it is stored
			renames = append(renames, storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: id, DisplayName: "r"}})
			c := call
			c.EndedAt = end.EndedAt
			whole = append(whole, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}})
		}
	}
	// Ends that arrive first go in before their starts; the rest after.
	var early, late []storage.CallOp
	for _, op := range ends {
		if id := op.Part.Call.ID; id[len(id)-1] == '2' || id[len(id)-1] == '7' {
			early = append(early, op)
		} else {
			late = append(late, op)
		}
	}
	for _, batch := range [][]storage.CallOp{renames, early, whole, starts, late} {
		for _, op := range batch { // one op per write: each later part merges
			if _, err := s.WriteCallOps(ctx, []storage.CallOp{op}); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkLatency := func(s *Store, stage string) {
		t.Helper()
		var rows, wrong, ended int
		err := s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE latency_ms IS DISTINCT FROM epoch_ms(ended_at) - epoch_ms(started_at)),
			count(latency_ms) FROM calls`).Scan(&rows, &wrong, &ended)
		if err != nil {
			t.Fatal(err)
		}
		if rows != n || wrong != 0 || ended != n-n/5 {
			t.Fatalf("%s: %d rows, %d with a latency, %d of them not ended_at - started_at; want %d, %d, 0", stage, rows, ended, wrong, n, n-n/5)
		}
	}
	checkLatency(s, "written")

	// An older store: the column empty. Opening fills it.
	if _, err := s.db.ExecContext(ctx, "UPDATE calls SET latency_ms = NULL"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointCalls(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	checkLatency(s, "reopened")

	s.scatteredRows = 0 // read every page in two steps, as one scattered over a large store
	for _, dir := range []string{"desc", "asc"} {
		all := queryIDs(t, s, storage.CallsQuery{ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "summary.weave.latency_ms", Direction: dir}}})
		for _, page := range []struct{ limit, offset int64 }{{1, 0}, {10, 0}, {25, 40}, {100, 100}} {
			q := storage.CallsQuery{ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "summary.weave.latency_ms", Direction: dir}}, Limit: page.limit, Offset: page.offset}
			got := queryIDs(t, s, q)
			want := all[min(int(page.offset), len(all)):min(int(page.offset+page.limit), len(all))]
			if !slices.Equal(got, want) {
				t.Errorf("%s limit %d offset %d: %v, want %v", dir, page.limit, page.offset, got, want)
			}
		}
	}
}

func queryIDs(t *testing.T, s *Store, q storage.CallsQuery) []string {
	t.Helper()
	var ids []string
	for c, err := range s.QueryCalls(context.Background(), q) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return ids
}
