package duckdb

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

var locT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestLocatorCoversEveryRunThatHoldsAnID(t *testing.T) {
	l := newCallLocator(4, 2)
	for i := range 6 { // runs: {c0 c1 | c2 c3} sealed, {c4 c5 | open
		l.record("e/p", fmt.Sprintf("c%d", i), fmt.Sprintf("t%d", i/2), locT0.Add(time.Duration(i)*time.Hour))
	}
	l.record("e/p", "c0", "t0", locT0.Add(10*time.Hour)) // restarted later: open run
	cases := []struct {
		name    string
		project string
		ids     []string
		traces  bool
		covers  []time.Time
		none    bool
	}{
		{"call in a sealed run", "e/p", []string{"c3"}, false, []time.Time{locT0.Add(3 * time.Hour)}, false},
		{"restarted call: both runs", "e/p", []string{"c0"}, false, []time.Time{locT0, locT0.Add(10 * time.Hour)}, false},
		{"trace", "e/p", []string{"t2"}, true, []time.Time{locT0.Add(4 * time.Hour), locT0.Add(5 * time.Hour)}, false},
		{"two calls", "e/p", []string{"c1", "c5"}, false, []time.Time{locT0.Add(time.Hour), locT0.Add(5 * time.Hour)}, false},
		{"another project's id", "e/other", []string{"c1"}, false, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spans, ok := l.startedWithin(tc.project, tc.ids, tc.traces)
			if !ok {
				t.Fatal("locator could not narrow the read")
			}
			if tc.none && len(spans) != 0 {
				t.Fatalf("spans %v for ids never recorded", spans)
			}
			for _, at := range tc.covers {
				if !covered(spans, at) {
					t.Fatalf("%v not within %v", at, spans)
				}
			}
		})
	}
}

// TestLocatorNarrowsToTheSlice checks that a read is narrowed to the time
// range of the slice that holds its id, not to its whole run, in sealed
// and open runs alike.
func TestLocatorNarrowsToTheSlice(t *testing.T) {
	l := newCallLocator(8, 2)
	for i := range 12 { // a sealed run of four slices, then two open slices
		l.record("e/p", fmt.Sprintf("c%d", i), fmt.Sprintf("t%d", i), locT0.Add(time.Duration(i)*time.Hour))
	}
	for _, i := range []int{0, 5, 7, 8, 11} {
		spans, ok := l.startedWithin("e/p", []string{fmt.Sprintf("c%d", i)}, false)
		if !ok || len(spans) != 1 {
			t.Fatalf("c%d: spans %v (%v), want one", i, spans, ok)
		}
		slice := i / 2 * 2
		want := sqlgen.TimeRange{From: locT0.Add(time.Duration(slice) * time.Hour), To: locT0.Add(time.Duration(slice+1) * time.Hour)}
		if spans[0] != want {
			t.Errorf("c%d: range %v, want its slice's %v", i, spans[0], want)
		}
	}
}

func covered(ranges []sqlgen.TimeRange, at time.Time) bool {
	for _, r := range ranges {
		if !at.Before(r.From) && !at.After(r.To) {
			return true
		}
	}
	return false
}

func TestLocatorGivesUpWhereItCannotNarrow(t *testing.T) {
	l := newCallLocator(1, 1)
	for i := range maxLocatedRanges + 1 {
		l.record("e/p", "many", "t", locT0.Add(time.Duration(i)*time.Hour))
	}
	l.record("e/p", "timeless", "t2", time.Time{})
	many := make([]string, maxLocatedIDs+1)
	cases := []struct {
		name   string
		ids    []string
		traces bool
	}{
		{"more ranges than a predicate should hold", []string{"many"}, false},
		{"a start without a time", []string{"timeless"}, false},
		{"too many ids", many, false},
		{"no ids", nil, true},
	}
	for _, tc := range cases {
		if _, ok := l.startedWithin("e/p", tc.ids, tc.traces); ok {
			t.Errorf("%s: narrowed, want a scan", tc.name)
		}
	}
}

// TestReadsByIDFindCallsWhereverTheyStarted checks what a read narrowed by
// the locator returns against every way a call's start time is set: fresh
// starts, a start merged into an earlier end, a call started again later,
// and the locator rebuilt from the table on reopen.
func TestReadsByIDFindCallsWhereverTheyStarted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s.located = newCallLocator(6, 3)
	start := func(id, trace string, at time.Time) storage.CallOp {
		return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: id, TraceID: trace, OpName: "op", StartedAt: at}}}
	}
	ended := locT0
	write := func(ops ...storage.CallOp) {
		if _, err := s.WriteCallOps(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		write(start(fmt.Sprintf("c%d", i), fmt.Sprintf("t%d", i%3), locT0.Add(time.Duration(i)*time.Hour)))
	}
	write(storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: "late", EndedAt: &ended}}})
	write(start("late", "t0", locT0.Add(-48*time.Hour)))
	write(start("c1", "t1", locT0.Add(72*time.Hour)))
	want := map[string]time.Time{"c0": locT0, "c1": locT0.Add(72 * time.Hour), "c9": locT0.Add(9 * time.Hour), "late": locT0.Add(-48 * time.Hour)}
	checkReads(t, s, want)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkReads(t, s, want)
}

func checkReads(t *testing.T, s *Store, want map[string]time.Time) {
	t.Helper()
	ctx := context.Background()
	for id, at := range want {
		got := readAll(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{id}}})
		if len(got) != 1 || !got[0].StartedAt.Equal(at) {
			t.Fatalf("read %s: %d calls %v, want one started %v", id, len(got), got, at)
		}
	}
	traces := map[string]int{"t0": 5, "t1": 3, "t2": 3, "missing": 0}
	for trace, n := range traces {
		q := storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{TraceIDs: []string{trace}}}
		if got := readAll(t, s, q); len(got) != n {
			t.Fatalf("trace %s: %d calls, want %d", trace, len(got), n)
		}
		if st, err := s.CountCalls(ctx, q, 0); err != nil || st.Count != int64(n) {
			t.Fatalf("count trace %s: %d (%v), want %d", trace, st.Count, err, n)
		}
	}
	if got := readAll(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{"missing"}}}); len(got) != 0 {
		t.Fatalf("read of a missing id returned %v", got)
	}
}

func readAll(t *testing.T, s *Store, q storage.CallsQuery) []storage.StoredCall {
	t.Helper()
	var out []storage.StoredCall
	for c, err := range s.QueryCalls(context.Background(), q) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// BenchmarkLocator times narrowing a read by one id on a locator that has
// recorded WEFT_BENCH_CALLS starts (default 2M), and reports its memory
// per recorded call.
func BenchmarkLocator(b *testing.B) {
	calls := 2_000_000
	if n, err := strconv.Atoi(os.Getenv("WEFT_BENCH_CALLS")); err == nil && n > 0 {
		calls = n
	}
	l := newCallLocator(locatorRun, locatorSlice)
	for i := range calls {
		l.record("bench/otel", benchCallID(0, i), benchTraceID(0, i, calls), locT0.Add(time.Duration(i)*time.Millisecond))
	}
	size := 0
	for _, r := range l.runs {
		size += r.calls.bytes() + r.traces.bytes()
	}
	b.ResetTimer()
	for i := range b.N {
		spans, ok := l.startedWithin("bench/otel", []string{benchCallID(0, i*7919%calls)}, false)
		if !ok || len(spans) == 0 {
			b.Fatalf("call %d not located", i)
		}
	}
	b.ReportMetric(float64(size)/float64(calls), "filter-B/call")
}

// TestLoadCallKeysReadsEveryPage checks that the startup load, read in
// pages of row ids, puts every stored call in the id filter and the
// locator.
func TestLoadCallKeysReadsEveryPage(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ops []storage.CallOp
	for i := range 20 {
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: fmt.Sprintf("c%d", i), TraceID: fmt.Sprintf("t%d", i), OpName: "op",
			StartedAt: locT0.Add(time.Duration(i) * time.Hour)}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	for _, pageRows := range []int64{1, 3, 7, 20, 1 << 18} {
		loc := newCallLocator(4, 2)
		f, err := loadCallKeys(ctx, s.db, loc, pageRows)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			id := fmt.Sprintf("c%d", i)
			if !f.mayContain("e/p", id) {
				t.Fatalf("pages of %d: %s not in the id filter", pageRows, id)
			}
			spans, ok := loc.startedWithin("e/p", []string{id}, false)
			if at := locT0.Add(time.Duration(i) * time.Hour); !ok || !covered(spans, at) {
				t.Fatalf("pages of %d: %s started %v, located %v (%v)", pageRows, id, at, spans, ok)
			}
		}
	}
}
