package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// TestMergesFindEveryStoredRow: a merge looks a part's row up only in
// the blocks the locator places it in. Rows stored without a start (an
// end, a rename or a delete that came first) have no start the locator
// knows, and rows stored by an earlier process are known only from the
// table; whatever the order and whatever restarts come between, a call
// keeps one row holding every side that arrived.
func TestMergesFindEveryStoredRow(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	t1 := t0.Add(2500 * time.Millisecond)
	start := func(at time.Time) storage.CallOp {
		return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: "c", TraceID: "t",
			OpName: "op", DisplayName: "started", StartedAt: at, Inputs: json.RawMessage(`{"q":1}`)}}}
	}
	end := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: "c", EndedAt: &t1,
		Output: json.RawMessage(`"done"`)}}}
	rename := storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c", DisplayName: "renamed"}}
	del := storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"c"}, At: t0}}
	reopen := storage.CallOp{} // not an op: close the store and open it again
	type want struct {
		name             string
		hasStart, hasEnd bool
		deleted          bool
		latency          int64 // -1: NULL
	}
	tests := []struct {
		name  string
		steps []storage.CallOp
		want  want
	}{
		{"start then end", []storage.CallOp{start(t0), end}, want{"started", true, true, false, 2500}},
		{"end before start", []storage.CallOp{end, start(t0)}, want{"started", true, true, false, 2500}},
		{"end, restart, start", []storage.CallOp{end, reopen, start(t0)}, want{"started", true, true, false, 2500}},
		{"start, restart, end", []storage.CallOp{start(t0), reopen, end}, want{"started", true, true, false, 2500}},
		{"rename before start", []storage.CallOp{rename, start(t0)}, want{"renamed", true, false, false, -1}},
		{"rename, restart, start, end", []storage.CallOp{rename, reopen, start(t0), end}, want{"renamed", true, true, false, 2500}},
		{"start, restart, rename", []storage.CallOp{start(t0), reopen, rename}, want{"renamed", true, false, false, -1}},
		{"delete before start", []storage.CallOp{del, start(t0), end}, want{"started", true, true, true, 2500}},
		{"delete, restart, start", []storage.CallOp{del, reopen, start(t0)}, want{"started", true, false, true, -1}},
		{"start again, earlier", []storage.CallOp{start(t0), start(t0.Add(-time.Hour)), end}, want{"started", true, true, false, 3602500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			open := func() *Store {
				s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s := open()
			defer func() { _ = s.Close() }()
			// Other calls before and after, so that the locator has
			// blocks to leave out.
			writeOtherCalls(t, s, "before", t0.Add(-48*time.Hour))
			for i, op := range tt.steps {
				if op == reopen {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = open()
					continue
				}
				// Each part in a batch with ends of other stored calls,
				// as a log replay stores it.
				batch := append(otherEnds("before", t0), op)
				if _, err := s.WriteCallOps(ctx, batch); err != nil {
					t.Fatal(err)
				}
				writeOtherCalls(t, s, fmt.Sprintf("after-%d", i), t0.Add(48*time.Hour))
			}
			var (
				n                int
				name             string
				hasStart, hasEnd bool
				deleted          bool
				latency          sql.NullInt64
			)
			err := s.db.QueryRowContext(ctx, `SELECT count(*), any_value(display_name), bool_or(has_start), bool_or(has_end),
				bool_or(deleted_at IS NOT NULL), any_value(latency_ms) FROM calls WHERE project_id = 'e/p' AND id = 'c'`).
				Scan(&n, &name, &hasStart, &hasEnd, &deleted, &latency)
			if err != nil {
				t.Fatal(err)
			}
			got := want{name, hasStart, hasEnd, deleted, -1}
			if latency.Valid {
				got.latency = latency.Int64
			}
			if n != 1 || got != tt.want {
				t.Fatalf("%d rows, %+v; want one row, %+v", n, got, tt.want)
			}
			var others int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE project_id = 'e/p' AND id LIKE 'before-%' AND has_end`).Scan(&others); err != nil {
				t.Fatal(err)
			}
			if others != 3 {
				t.Fatalf("%d of the other calls ended, want 3", others)
			}
		})
	}
}

// writeOtherCalls stores the starts of three calls prefix-0..2 at at.
func writeOtherCalls(t *testing.T, s *Store, prefix string, at time.Time) {
	t.Helper()
	writeCallStarts(t, s, 3, func(i int) storage.Call {
		return storage.Call{ProjectID: "e/p", ID: fmt.Sprintf("%s-%d", prefix, i), TraceID: prefix, OpName: "op", StartedAt: at}
	})
}

// otherEnds are the ends of the three calls writeOtherCalls stored.
func otherEnds(prefix string, at time.Time) []storage.CallOp {
	ops := make([]storage.CallOp, 3)
	for i := range ops {
		ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p",
			ID: fmt.Sprintf("%s-%d", prefix, i), EndedAt: &at}}}
	}
	return ops
}

func TestCoarsenJoinsTheClosestRanges(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0).UTC() }
	r := func(from, to int) sqlgen.TimeRange { return sqlgen.TimeRange{From: at(from), To: at(to)} }
	tests := []struct {
		name string
		in   []sqlgen.TimeRange
		n    int
		want []sqlgen.TimeRange
	}{
		{"none", nil, 2, nil},
		{"under the bound", []sqlgen.TimeRange{r(10, 11), r(0, 1)}, 2, []sqlgen.TimeRange{r(0, 1), r(10, 11)}},
		{"overlapping first", []sqlgen.TimeRange{r(0, 5), r(3, 8), r(20, 21)}, 2, []sqlgen.TimeRange{r(0, 8), r(20, 21)}},
		{"closest gap joined", []sqlgen.TimeRange{r(0, 1), r(3, 4), r(100, 101)}, 2, []sqlgen.TimeRange{r(0, 4), r(100, 101)}},
		{"last gap closest", []sqlgen.TimeRange{r(0, 1), r(50, 51), r(52, 53)}, 2, []sqlgen.TimeRange{r(0, 1), r(50, 53)}},
		{"down to one", []sqlgen.TimeRange{r(0, 1), r(50, 51), r(90, 95)}, 1, []sqlgen.TimeRange{r(0, 95)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := coarsen(tt.in, tt.n)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("coarsen = %v, want %v", got, tt.want)
			}
		})
	}
}
