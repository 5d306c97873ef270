package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// aggregateStore is what the aggregate and project listing cases need
// from a backend.
type aggregateStore interface {
	storage.CallWriter
	storage.CallsAggregator
	storage.ProjectLister
	storage.ObjectStore
	storage.TableStore
	storage.FeedbackStore
}

// runAggregate runs every aggregate case against stores made by newStore.
func runAggregate(t *testing.T, newStore func(t *testing.T) aggregateStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s aggregateStore)
	}{
		{"BucketsCountsErrorsAndLatency", testAggregateBuckets},
		{"SumsUsagePerModel", testAggregateUsage},
		{"FiltersByOpAndRoots", testAggregateFilters},
		{"RefusesBadRanges", testAggregateBadRanges},
		{"LatencyFiguresAndQuantiles", testAggregateLatencyFigures},
		{"BucketsFromAnOrigin", testAggregateOrigin},
		{"StatsBucketBound", testAggregateStatsBound},
		{"MinutesAddUpToAWindow", testAggregateMinutesAddUp},
		{"ListsProjectsWithCalls", testListProjects},
		{"ListsProjectsWithAnyData", testListProjectsWithData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// timedCall writes a call of project e/a started at base+at, lasting dur
// (running when dur < 0), with an exception when failed and summary.
func timedCall(id, parent, op string, at, dur time.Duration, failed bool, summary string) []storage.CallOp {
	s := start("e/a", id, "tr-"+id, parent, op, base.Add(at))
	if dur < 0 {
		return []storage.CallOp{s}
	}
	e := end("e/a", id, base.Add(at+dur), `null`)
	e.Part.Call.Summary = json.RawMessage(summary)
	if failed {
		msg := "boom"
		e.Part.Call.Exception = &msg
	}
	return []storage.CallOp{s, e}
}

// writeAggregateFixture writes calls in two one-minute buckets from base
// (a gap between them), one outside the range and one deleted.
func writeAggregateFixture(t *testing.T, s aggregateStore) {
	usage := `{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"cache_read_input_tokens":4},` +
		`"claude":{"requests":2,"input_tokens":7,"output_tokens":3,"cache_creation_input_tokens":2}}}`
	var ops []storage.CallOp
	for _, c := range []struct {
		id, parent, op string
		at, dur        time.Duration
		failed         bool
		summary        string
	}{
		{"a", "", "chat", 0, 100 * time.Millisecond, false, usage},
		{"b", "a", "tool", 10 * time.Second, 200 * time.Millisecond, true, `{}`},
		{"c", "", "chat", 20 * time.Second, 300 * time.Millisecond, false, `{"usage":{"gpt-4o":{"prompt_tokens":1,"completion_tokens":"x"}}}`},
		{"d", "", "chat", 30 * time.Second, -1, false, ``},
		{"e", "", "chat", 2*time.Minute + time.Second, time.Second, true, `{}`},
		{"f", "", "chat", 10 * time.Minute, time.Second, false, `{}`}, // after the range
		{"g", "", "chat", 5 * time.Second, time.Second, false, `{}`},  // deleted below
	} {
		ops = append(ops, timedCall(c.id, c.parent, c.op, c.at, c.dur, c.failed, c.summary)...)
	}
	ops = append(ops, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/a", IDs: []string{"g"}, At: base}})
	write(t, s, ops...)
}

func aggregate(t *testing.T, s aggregateStore, f storage.CallsFilter) storage.CallsAggregate {
	t.Helper()
	got, err := s.AggregateCalls(context.Background(), storage.CallsAggregateQuery{
		Calls: storage.CallsQuery{ProjectID: "e/a", Filter: f}, Start: base, End: base.Add(5 * time.Minute), BucketSeconds: 60})
	if err != nil {
		t.Fatalf("AggregateCalls: %v", err)
	}
	return got
}

func testAggregateBuckets(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s)
	got := aggregate(t, s, storage.CallsFilter{})
	if len(got.Buckets) != 2 {
		t.Fatalf("buckets = %+v, want 2 (minutes 0 and 2)", got.Buckets)
	}
	b0, b2 := got.Buckets[0], got.Buckets[1]
	if !b0.Start.Equal(base) || b0.CallCount != 4 || b0.ErrorCount != 1 {
		t.Errorf("bucket 0 = %+v, want start %v, 4 calls, 1 error", b0, base)
	}
	// Ended calls of minute 0 took 100, 200 and 300 ms; d still runs.
	for name, p := range map[string]struct {
		got  *float64
		want float64
	}{"p50": {b0.LatencyP50, 200}, "p95": {b0.LatencyP95, 290}, "p99": {b0.LatencyP99, 298}} {
		if p.got == nil || *p.got < p.want-0.01 || *p.got > p.want+0.01 {
			t.Errorf("bucket 0 latency %s = %v, want %v", name, p.got, p.want)
		}
	}
	if !b2.Start.Equal(base.Add(2*time.Minute)) || b2.CallCount != 1 || b2.ErrorCount != 1 {
		t.Errorf("bucket 2 = %+v, want start +2m, 1 call, 1 error", b2)
	}
}

func testAggregateUsage(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s)
	got := aggregate(t, s, storage.CallsFilter{})
	want := []storage.ModelUsageBucket{
		{Start: base, Model: "claude", Entries: 1, Requests: 2, PromptTokens: 7, CompletionTokens: 3, CacheCreationInputTokens: 2},
		{Start: base, Model: "gpt-4o", Entries: 2, Requests: 1, PromptTokens: 11, CompletionTokens: 5, TotalTokens: 15, CacheReadInputTokens: 4},
	}
	for i := range got.Usage {
		got.Usage[i].Start = got.Usage[i].Start.UTC()
	}
	if !reflect.DeepEqual(got.Usage, want) {
		t.Errorf("usage = %+v\nwant %+v", got.Usage, want)
	}
}

func testAggregateFilters(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s)
	tools := aggregate(t, s, storage.CallsFilter{OpNames: []string{"tool"}})
	if len(tools.Buckets) != 1 || tools.Buckets[0].CallCount != 1 || len(tools.Usage) != 0 {
		t.Errorf("op tool: %+v, want one bucket of 1 call and no usage", tools)
	}
	roots := aggregate(t, s, storage.CallsFilter{TraceRootsOnly: true})
	if len(roots.Buckets) != 2 || roots.Buckets[0].CallCount != 3 || roots.Buckets[0].ErrorCount != 0 {
		t.Errorf("roots: %+v, want 3 calls and no error in minute 0", roots.Buckets)
	}
}

func testAggregateBadRanges(t *testing.T, s aggregateStore) {
	for name, q := range map[string]storage.CallsAggregateQuery{
		"zero width":   {Start: base, End: base.Add(time.Hour)},
		"empty range":  {Start: base, End: base, BucketSeconds: 60},
		"many buckets": {Start: base, End: base.Add(time.Duration(storage.MaxAggregateBuckets+1) * time.Second), BucketSeconds: 1},
	} {
		q.Calls.ProjectID = "e/a"
		if _, err := s.AggregateCalls(context.Background(), q); !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
}

// testListProjects lists only the entity's projects that hold visible
// calls, the most recently active first.
func testListProjects(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s) // e/a, calls until base+10m
	ops := timedCall("z", "", "chat", 20*time.Minute, time.Second, false, `{}`)
	for _, op := range ops {
		op.Part.Call.ProjectID = "e/z"
	}
	other := timedCall("o", "", "chat", 0, time.Second, false, `{}`)
	for _, op := range other {
		op.Part.Call.ProjectID = "ee/x" // an entity whose name extends e
	}
	write(t, s, append(ops, other...)...)
	got, err := s.ListProjects(context.Background(), "e")
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.ProjectSummary{
		{ProjectID: "e/z", CallCount: 1, LastCallAt: base.Add(20 * time.Minute), LastActivityAt: base.Add(20 * time.Minute)},
		{ProjectID: "e/a", CallCount: 6, LastCallAt: base.Add(10 * time.Minute), LastActivityAt: base.Add(10 * time.Minute)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListProjects(e) = %+v\nwant %+v", got, want)
	}
}
