package conformance

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// The figures call statistics (/calls/stats) read from an aggregate
// query besides the charts': latency count, sum, extremes and quantiles
// of any level, buckets aligned before the range's start, and the
// larger bucket bound a query may ask for.

// near reports whether p holds want, to a hundredth.
func near(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 0.01 }

func testAggregateLatencyFigures(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s)
	got, err := s.AggregateCalls(context.Background(), storage.CallsAggregateQuery{
		Calls: storage.CallsQuery{ProjectID: "e/a"}, Start: base, End: base.Add(5 * time.Minute), BucketSeconds: 60,
		Quantiles: []float64{0, 0.25, 1}})
	if err != nil {
		t.Fatalf("AggregateCalls: %v", err)
	}
	if len(got.Buckets) != 2 {
		t.Fatalf("buckets = %+v, want 2 (minutes 0 and 2)", got.Buckets)
	}
	// Minute 0: ended calls of 100, 200 and 300 ms; d still runs.
	b := got.Buckets[0]
	if b.LatencyCount != 3 || math.Abs(b.LatencySum-600) > 0.01 || !near(b.LatencyMin, 100) || !near(b.LatencyMax, 300) {
		t.Errorf("minute 0 latency count %d sum %v min %v max %v, want 3, 600, 100, 300",
			b.LatencyCount, b.LatencySum, b.LatencyMin, b.LatencyMax)
	}
	if len(b.LatencyQuantiles) != 3 || !near(b.LatencyQuantiles[0], 100) || !near(b.LatencyQuantiles[1], 150) ||
		!near(b.LatencyQuantiles[2], 300) {
		t.Errorf("minute 0 quantiles 0, 0.25, 1 = %v, want 100, 150, 300", b.LatencyQuantiles)
	}
	if b := got.Buckets[1]; b.LatencyCount != 1 || math.Abs(b.LatencySum-1000) > 0.01 || !near(b.LatencyMin, 1000) ||
		len(b.LatencyQuantiles) != 3 || !near(b.LatencyQuantiles[1], 1000) {
		t.Errorf("minute 2 latency count %d sum %v min %v quantiles %v, want one call of 1000 ms",
			b.LatencyCount, b.LatencySum, b.LatencyMin, b.LatencyQuantiles)
	}
	// A bucket whose calls all still run has no latency figures.
	write(t, s, timedCall("r", "", "chat", 3*time.Minute, -1, false, ``)...)
	got, err = s.AggregateCalls(context.Background(), storage.CallsAggregateQuery{
		Calls: storage.CallsQuery{ProjectID: "e/a"}, Start: base.Add(3 * time.Minute), End: base.Add(4 * time.Minute),
		BucketSeconds: 60, Quantiles: []float64{0.5}})
	if err != nil {
		t.Fatalf("AggregateCalls: %v", err)
	}
	if len(got.Buckets) != 1 || got.Buckets[0].LatencyCount != 0 || got.Buckets[0].LatencyMin != nil ||
		got.Buckets[0].LatencyMax != nil || len(got.Buckets[0].LatencyQuantiles) != 1 || got.Buckets[0].LatencyQuantiles[0] != nil {
		t.Errorf("running calls only: %+v, want one bucket without latency figures", got.Buckets)
	}
}

// testAggregateOrigin: buckets counted from an origin before the start
// hold only the calls from the start on, whether it falls mid-minute.
func testAggregateOrigin(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s)
	got, err := s.AggregateCalls(context.Background(), storage.CallsAggregateQuery{
		Calls: storage.CallsQuery{ProjectID: "e/a"}, Start: base.Add(5 * time.Second), End: base.Add(5*time.Minute + 30*time.Second),
		Origin: base.Add(-30 * time.Second), BucketSeconds: 60})
	if err != nil {
		t.Fatalf("AggregateCalls: %v", err)
	}
	// b (+10s, failed) and c (+20s) in the bucket from -30s; d (+30s) in
	// the one from +30s; e (+2m1s, failed) in the one from +1m30s. a, at
	// base, is before the start.
	want := []struct {
		at            time.Duration
		calls, errors int64
	}{{-30 * time.Second, 2, 1}, {30 * time.Second, 1, 0}, {90 * time.Second, 1, 1}}
	if len(got.Buckets) != len(want) {
		t.Fatalf("buckets = %+v, want %d", got.Buckets, len(want))
	}
	for i, w := range want {
		if b := got.Buckets[i]; !b.Start.Equal(base.Add(w.at)) || b.CallCount != w.calls || b.ErrorCount != w.errors {
			t.Errorf("bucket %d = %v %d calls %d errors, want %v %d %d", i, b.Start, b.CallCount, b.ErrorCount,
				base.Add(w.at), w.calls, w.errors)
		}
	}
	// Of the usage, only c's counts: a's started before the range.
	if len(got.Usage) != 1 || !got.Usage[0].Start.Equal(base.Add(-30*time.Second)) || got.Usage[0].Model != "gpt-4o" ||
		got.Usage[0].Entries != 1 || got.Usage[0].PromptTokens != 1 || got.Usage[0].CacheReadInputTokens != 0 {
		t.Errorf("usage = %+v, want c's gpt-4o entry of 1 prompt token in the first bucket", got.Usage)
	}
	_, err = s.AggregateCalls(context.Background(), storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/a"},
		Start: base, End: base.Add(time.Hour), Origin: base.Add(time.Second), BucketSeconds: 60})
	if !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("origin after start: err = %v, want ErrInvalidArgument", err)
	}
}

// testAggregateStatsBound: a query may ask for up to MaxStatsBuckets
// buckets, and no more; a range of whole buckets spans just those.
func testAggregateStatsBound(t *testing.T, s aggregateStore) {
	writeAggregateFixture(t, s)
	q := storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/a"}, Start: base,
		End: base.Add(time.Duration(storage.MaxStatsBuckets) * time.Second), BucketSeconds: 1, MaxBuckets: storage.MaxStatsBuckets}
	got, err := s.AggregateCalls(context.Background(), q)
	if err != nil {
		t.Fatalf("%d one-second buckets: %v", storage.MaxStatsBuckets, err)
	}
	if len(got.Buckets) != 6 {
		t.Errorf("buckets = %d, want 6 (a through f)", len(got.Buckets))
	}
	q.End = q.End.Add(time.Second)
	if _, err := s.AggregateCalls(context.Background(), q); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("%d buckets: err = %v, want ErrInvalidArgument", storage.MaxStatsBuckets+1, err)
	}
}
