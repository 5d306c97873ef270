package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/latencyhist"
)

// TestBinSQLIsBin holds the SQL rendering of a latency's histogram bin to
// the Go one, on the engine that runs it.
func TestBinSQLIsBin(t *testing.T) {
	s := openTestStore(t)
	values := []int64{0, 1, -1, 127, 128, 255, 256, -256, 257, 511, 512, 1023, 1024, 4095, 4096, 65535, 65536,
		1<<40 - 1, 1 << 40, -(1 << 40), 1<<52 + 12345, math.MaxInt64 >> 1}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		v := rng.Int64N(1 << uint(rng.IntN(50)+1))
		values = append(values, v, -v, v+1, v-1)
	}
	rows, err := s.db.Query("SELECT v, "+latencyhist.BinSQL("v")+" FROM unnest(?::BIGINT[]) AS t(v)", values)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var v int64
		var bin int32
		if err := rows.Scan(&v, &bin); err != nil {
			t.Fatal(err)
		}
		if want := latencyhist.Bin(v); bin != want {
			t.Errorf("BinSQL(%d) = %d, Bin = %d", v, bin, want)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != len(values) {
		t.Fatalf("read %d of %d values: %v", n, len(values), err)
	}
	var null *int32
	if err := s.db.QueryRow("SELECT " + latencyhist.BinSQL("CAST(NULL AS BIGINT)")).Scan(&null); err != nil || null != nil {
		t.Errorf("BinSQL(NULL) = %v, %v; want NULL", null, err)
	}
}

// rollupWorkload writes calls over the half hour from t0 the ways writes
// change a chart: starts and ends in separate writes and out of order,
// calls still running, errors, one model's usage and several models',
// roots and children of several ops, deletes, and a start sent again at
// another time.
func rollupWorkload(t *testing.T, s *Store, t0 time.Time, seed uint64) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	ops := []string{"chat", "tool", "weave:///e/p/op/agent:abc", "weave:///e/p/op/agent:def"}
	var starts, ends []storage.CallOp
	for i := range 600 {
		id := fmt.Sprintf("c%03d", i)
		at := t0.Add(time.Duration(rng.Int64N(int64(30 * time.Minute))))
		parent := ""
		if i%3 != 0 {
			parent = fmt.Sprintf("c%03d", i/3*3)
		}
		starts = append(starts, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: id, TraceID: "t" + id, ParentID: parent, OpName: ops[rng.IntN(len(ops))], StartedAt: at,
			Inputs: json.RawMessage(`{}`)}}})
		if rng.IntN(10) == 0 {
			continue // still running
		}
		latency := time.Duration(rng.ExpFloat64() * float64(2*time.Second))
		if rng.IntN(50) == 0 {
			latency = -time.Second // an end stamped before its start
		}
		ended := at.Add(latency)
		var summary string
		switch rng.IntN(3) {
		case 0:
			summary = fmt.Sprintf(`{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`+
				`"cache_read_input_tokens":%d}}}`, i, 2*i, 3*i, i/2)
		case 1:
			summary = fmt.Sprintf(`{"usage":{"gpt-4o":{"input_tokens":%d},"claude":{"requests":2,"output_tokens":%d,`+
				`"cache_creation_input_tokens":%d}}}`, i, i+1, i%7)
		default:
			summary = `{}`
		}
		e := storage.Call{ProjectID: "e/p", ID: id, EndedAt: &ended, Summary: json.RawMessage(summary), Output: json.RawMessage(`1`)}
		if rng.IntN(8) == 0 {
			msg := "boom"
			e.Exception = &msg
		}
		ends = append(ends, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: e}})
	}
	write := func(ops []storage.CallOp) {
		t.Helper()
		for i := 0; i < len(ops); i += 50 {
			if _, err := s.WriteCallOps(ctx, ops[i:min(i+50, len(ops))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A third of the ends come before their starts.
	third := len(ends) / 3
	write(ends[:third])
	write(starts)
	write(ends[third:])
	// Some calls are deleted (with their children), and one start is sent
	// again ten minutes later.
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"c003", "c100", "c101"}, At: t0}}}); err != nil {
		t.Fatal(err)
	}
	again := *starts[42].Part
	again.Call.StartedAt = again.Call.StartedAt.Add(10 * time.Minute)
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &again}}); err != nil {
		t.Fatal(err)
	}
}

// sameCharts fails unless two aggregates agree: counts and usage exactly,
// latency quantiles within half a histogram bin.
func sameCharts(t *testing.T, what string, got, want storage.CallsAggregate) {
	t.Helper()
	if len(got.Buckets) != len(want.Buckets) {
		t.Fatalf("%s: %d buckets, want %d", what, len(got.Buckets), len(want.Buckets))
	}
	close := func(a, b *float64) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return math.Abs(*a-*b) <= math.Max(math.Abs(*b)/latencyhist.SubBins, 1)
	}
	for i, g := range got.Buckets {
		w := want.Buckets[i]
		if !g.Start.Equal(w.Start) || g.CallCount != w.CallCount || g.ErrorCount != w.ErrorCount ||
			!close(g.LatencyP50, w.LatencyP50) || !close(g.LatencyP95, w.LatencyP95) || !close(g.LatencyP99, w.LatencyP99) {
			t.Errorf("%s: bucket %d = %s, want %s", what, i, bucketText(g), bucketText(w))
		}
		// A scan reads latencies to the microsecond, the rollups in whole
		// milliseconds: each latency may differ by under 1 ms.
		if g.LatencyCount != w.LatencyCount || math.Abs(g.LatencySum-w.LatencySum) > float64(w.LatencyCount) ||
			!close(g.LatencyMin, w.LatencyMin) || !close(g.LatencyMax, w.LatencyMax) || len(g.LatencyQuantiles) != len(w.LatencyQuantiles) {
			t.Errorf("%s: bucket %d latency count %d sum %.1f min %v max %v quantiles %d, want %d %.1f %v %v %d", what, i,
				g.LatencyCount, g.LatencySum, g.LatencyMin, g.LatencyMax, len(g.LatencyQuantiles),
				w.LatencyCount, w.LatencySum, w.LatencyMin, w.LatencyMax, len(w.LatencyQuantiles))
			continue
		}
		for j := range g.LatencyQuantiles {
			if !close(g.LatencyQuantiles[j], w.LatencyQuantiles[j]) {
				t.Errorf("%s: bucket %d quantile %d = %v, want %v", what, i, j, g.LatencyQuantiles[j], w.LatencyQuantiles[j])
			}
		}
	}
	if len(got.Usage) != len(want.Usage) {
		t.Fatalf("%s: usage %+v\nwant %+v", what, got.Usage, want.Usage)
	}
	for i, g := range got.Usage {
		w := want.Usage[i]
		g.Start, w.Start = g.Start.UTC(), w.Start.UTC()
		if g != w {
			t.Errorf("%s: usage %d = %+v, want %+v", what, i, g, w)
		}
	}
}

func bucketText(b storage.CallsBucket) string {
	f := func(p *float64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprintf("%.2f", *p)
	}
	return fmt.Sprintf("{%v calls=%d errors=%d p50=%s p95=%s p99=%s}", b.Start.UTC().Format(time.TimeOnly), b.CallCount, b.ErrorCount,
		f(b.LatencyP50), f(b.LatencyP95), f(b.LatencyP99))
}

// TestChartRollupsAnswerAsTheCallsDo: whether a chart's minutes are
// rolled up, dirty or some of each, it answers what a scan of the calls
// answers, for every filter the rollups keep and several bucket widths.
func TestChartRollupsAnswerAsTheCallsDo(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	s := openTestStore(t)
	s.stopMinutesRefresher() // refreshed by hand below
	rollupWorkload(t, s, t0, 7)
	filters := map[string]storage.CallsFilter{
		"all":            {},
		"an op":          {OpNames: []string{"chat"}},
		"an op wildcard": {OpNames: []string{"weave:///e/p/op/agent:*", "tool"}},
		"roots":          {TraceRootsOnly: true},
		"roots of an op": {TraceRootsOnly: true, OpNames: []string{"chat"}},
	}
	queries := map[string]storage.CallsAggregateQuery{}
	for name, f := range filters {
		for _, width := range []int64{60, 300, 1800} {
			queries[fmt.Sprintf("%s, %ds", name, width)] = storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p", Filter: f},
				Start: t0.Add(-time.Hour), End: t0.Add(time.Hour), BucketSeconds: width}
		}
		// A range from and to the middle of minutes, its buckets aligned
		// before its start, with quantiles of its own.
		queries[name+", mid-minute range"] = storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p", Filter: f},
			Start: t0.Add(3*time.Minute + 17*time.Second), End: t0.Add(21*time.Minute + 41*time.Second), Origin: t0,
			BucketSeconds: 300, Quantiles: []float64{0, 0.25, 0.9, 1}}
		queries[name+", within one minute"] = storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p", Filter: f},
			Start: t0.Add(5*time.Minute + 10*time.Second), End: t0.Add(5*time.Minute + 50*time.Second), Origin: t0.Add(5 * time.Minute),
			BucketSeconds: 60}
	}
	check := func(stage string) {
		t.Helper()
		for name, q := range queries {
			if _, ok := minutesServe(q); !ok {
				t.Fatalf("%s: the rollups do not serve it", name)
			}
			want, err := s.aggregateByScan(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.AggregateCalls(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			sameCharts(t, stage+", "+name, got, want)
		}
		for name, f := range filters {
			q := storage.CallsQuery{ProjectID: "e/p", Filter: f}
			want, err := s.countByScan(ctx, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.CountCalls(ctx, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Count != want.Count || got.Count == 0 {
				t.Errorf("%s, count of %s = %d, want %d", stage, name, got.Count, want.Count)
			}
			if got, err := s.CountCalls(ctx, q, 7); err != nil || got.Count != 7 {
				t.Errorf("%s, count of %s up to 7 = %d, %v", stage, name, got.Count, err)
			}
		}
	}
	dirty := func() int {
		var n int
		if err := s.db.QueryRow("SELECT count(DISTINCT minute) FROM call_minutes_dirty").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if dirty() < 30 {
		t.Fatalf("%d dirty minutes after writing half an hour of calls", dirty())
	}
	check("every minute dirty")
	if _, err := s.refreshMinutes(ctx, 12); err != nil {
		t.Fatal(err)
	}
	check("some minutes rolled up")
	for {
		n, err := s.refreshMinutes(ctx, refreshBatch)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if n := dirty(); n != 0 {
		t.Fatalf("%d minutes dirty after refreshing them all", n)
	}
	check("every minute rolled up")

	refreshAll := func() {
		t.Helper()
		for {
			n, err := s.refreshMinutes(ctx, refreshBatch)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	// Writes after the refresh are seen at once, and again once rolled
	// up: every call started again seven minutes on (merges that move
	// rows between minutes), deletes, and calls expired by retention.
	rollupWorkload(t, s, t0.Add(7*time.Minute), 8)
	check("started again")
	refreshAll()
	check("started again, rolled up")
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"c006", "c201", "c402"}, At: t0}}}); err != nil {
		t.Fatal(err)
	}
	check("deleted")
	refreshAll()
	if _, err := s.ExpireCalls(ctx, storage.Retention{Default: time.Since(t0.Add(12*time.Minute + 30*time.Second))}, time.Now()); err != nil {
		t.Fatal(err)
	}
	check("expired")
	refreshAll()
	check("expired, rolled up")
}

// TestChartRollupsOfAnOlderStore: calls stored before the rollups existed
// are marked dirty when the store opens, answer from the calls until the
// refresher rolls them up, and the same after.
func TestChartRollupsOfAnOlderStore(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s.stopMinutesRefresher()
	rollupWorkload(t, s, t0, 9)
	q := storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p"}, Start: t0, End: t0.Add(time.Hour), BucketSeconds: 600}
	want, err := s.aggregateByScan(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// As a store written before the rollups: none of them, nothing marked.
	for _, stmt := range []string{"DELETE FROM call_minutes_dirty", "DELETE FROM call_minutes_state"} {
		if _, err := s.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.AggregateCalls(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	sameCharts(t, "after opening", got, want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var dirty int
		if err := s.db.QueryRow("SELECT count(*) FROM call_minutes_dirty").Scan(&dirty); err != nil {
			t.Fatal(err)
		}
		if dirty == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d minutes still dirty 30 s after opening: the refresher did not roll them up", dirty)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err = s.AggregateCalls(ctx, q); err != nil {
		t.Fatal(err)
	}
	sameCharts(t, "rolled up", got, want)
}

// TestChartsOutsideTheRollupsScan: ranges and filters the rollups do not
// keep are answered by a scan.
func TestChartsOutsideTheRollupsScan(t *testing.T) {
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	base := storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/p"}, Start: t0, End: t0.Add(time.Hour), BucketSeconds: 60}
	for name, change := range map[string]func(q *storage.CallsAggregateQuery){
		"seconds buckets":  func(q *storage.CallsAggregateQuery) { q.BucketSeconds = 90 },
		"start mid-minute": func(q *storage.CallsAggregateQuery) { q.Start = q.Start.Add(time.Second) },
		"origin mid-minute": func(q *storage.CallsAggregateQuery) {
			q.Origin, q.Start = q.Start.Add(time.Second), q.Start.Add(time.Minute)
		},
		"trace ids": func(q *storage.CallsAggregateQuery) { q.Calls.Filter.TraceIDs = []string{"t"} },
		"no thread": func(q *storage.CallsAggregateQuery) { q.Calls.Filter.ThreadIDs = []string{} },
	} {
		q := base
		change(&q)
		if _, ok := minutesServe(q); ok {
			t.Errorf("%s: served by the rollups", name)
		}
	}
	if _, ok := minutesServe(base); !ok {
		t.Error("whole minutes with no filter: not served by the rollups")
	}
	mid := base
	mid.Start, mid.End, mid.Origin = base.Start.Add(time.Second), base.End.Add(time.Millisecond), base.Start
	if _, ok := minutesServe(mid); !ok {
		t.Error("a range inside whole-minute buckets: not served by the rollups")
	}
}

// TestCountsHoldCallsWithoutAStartTime: a start without a time has no
// minute; the count from rollups still counts it, as the scan does.
func TestCountsHoldCallsWithoutAStartTime(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	var ops []storage.CallOp
	for i, at := range []time.Time{t0, {}, t0.Add(time.Minute), {}} {
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p",
			ID: fmt.Sprintf("c%d", i), TraceID: "t", OpName: "chat", StartedAt: at}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	for range 2 { // dirty, then rolled up
		got, err := s.CountCalls(ctx, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{OpNames: []string{"chat"}}}, 0)
		if err != nil || got.Count != 4 {
			t.Fatalf("count = %d, %v; want 4", got.Count, err)
		}
		if _, err := s.refreshMinutes(ctx, refreshBatch); err != nil {
			t.Fatal(err)
		}
	}
}
