package conformance

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/latencyhist"
)

// testAggregateMinutesAddUp holds what alert windows read together rely
// on: the per-minute buckets of a range, summed from any whole minute
// on, count the calls, errors and usage a read of that suffix alone
// answers, and latency histograms, when the store gives them, merge to
// its quantiles within half a bin.
func testAggregateMinutesAddUp(t *testing.T, s aggregateStore) {
	ctx := context.Background()
	var ops []storage.CallOp
	for i := range 240 { // over four hours, one in seven failing
		at := time.Duration(i)*time.Minute + time.Duration(i*7%60)*time.Second
		summary := fmt.Sprintf(`{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":%d,"completion_tokens":%d}}}`, 10+i%13, 3+i%5)
		if i%4 == 0 {
			summary = fmt.Sprintf(`{"usage":{"claude":{"requests":2,"input_tokens":%d,"output_tokens":1}}}`, i)
		}
		ops = append(ops, timedCall(fmt.Sprintf("m%03d", i), "", []string{"chat", "tool"}[i%2], at,
			time.Duration(50+i*37%900)*time.Millisecond, i%7 == 0, summary)...)
	}
	write(t, s, ops...)
	end := base.Add(4*time.Hour - 25*time.Second) // inside a minute, as a round's end is
	longest := end.Add(-3 * time.Hour).Truncate(time.Minute)
	for _, f := range []storage.CallsFilter{{}, {OpNames: []string{"chat"}}} {
		q := storage.CallsAggregateQuery{Calls: storage.CallsQuery{ProjectID: "e/a", Filter: f}, Start: longest, End: end,
			BucketSeconds: 60, MaxBuckets: 200, LatencyHistograms: true}
		minutes, err := s.AggregateCalls(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, window := range []time.Duration{5 * time.Minute, 17 * time.Minute, time.Hour + 3*time.Second, 3 * time.Hour} {
			start := end.Add(-window).Truncate(time.Minute)
			span := int64(end.Sub(start) / time.Second)
			alone, err := s.AggregateCalls(ctx, storage.CallsAggregateQuery{Calls: q.Calls, Start: start, End: end, BucketSeconds: (span + 59) / 60 * 60})
			if err != nil {
				t.Fatal(err)
			}
			if len(alone.Buckets) != 1 {
				t.Fatalf("%v %v alone: %d buckets, want 1", f.OpNames, window, len(alone.Buckets))
			}
			want := alone.Buckets[0]
			var got storage.CallsBucket
			var hist latencyhist.Histogram
			histograms := 0
			for _, b := range minutes.Buckets {
				if b.Start.Before(start) {
					continue
				}
				got.CallCount += b.CallCount
				got.ErrorCount += b.ErrorCount
				got.LatencyCount += b.LatencyCount
				if b.LatencyHistogram != nil {
					if b.LatencyHistogram.Count() != b.LatencyCount {
						t.Errorf("minute %v: histogram of %d latencies, bucket of %d", b.Start, b.LatencyHistogram.Count(), b.LatencyCount)
					}
					hist.Merge(b.LatencyHistogram)
					histograms++
				}
			}
			name := fmt.Sprintf("ops %v, window %v", f.OpNames, window)
			if got.CallCount != want.CallCount || got.ErrorCount != want.ErrorCount || got.LatencyCount != want.LatencyCount || want.CallCount == 0 {
				t.Errorf("%s: minutes add up to %d calls, %d errors, %d ended; alone %d, %d, %d", name,
					got.CallCount, got.ErrorCount, got.LatencyCount, want.CallCount, want.ErrorCount, want.LatencyCount)
			}
			if !reflect.DeepEqual(sumUsage(minutes.Usage, start), sumUsage(alone.Usage, start)) || len(alone.Usage) == 0 {
				t.Errorf("%s: minutes' usage %+v, alone %+v", name, sumUsage(minutes.Usage, start), alone.Usage)
			}
			if histograms == 0 {
				continue // a store without histograms
			}
			if histograms != countEnded(minutes.Buckets, start) {
				t.Errorf("%s: %d minutes with histograms, want every minute with ended calls", name, histograms)
			}
			for level, exact := range map[float64]*float64{0.5: want.LatencyP50, 0.95: want.LatencyP95, 0.99: want.LatencyP99} {
				v, ok := hist.Quantile(level)
				if !ok || exact == nil || math.Abs(v-*exact) > 0.004*math.Abs(*exact)+0.5 {
					t.Errorf("%s: merged p%v = %v, alone %v", name, level*100, v, deref(exact))
				}
			}
		}
	}
}

// sumUsage adds up the usage from start on per model, as one bucket.
func sumUsage(usage []storage.ModelUsageBucket, start time.Time) map[string]storage.ModelUsageBucket {
	out := map[string]storage.ModelUsageBucket{}
	for _, u := range usage {
		if u.Start.Before(start) {
			continue
		}
		s := out[u.Model]
		s.Model = u.Model
		s.Entries += u.Entries
		s.Requests += u.Requests
		s.PromptTokens += u.PromptTokens
		s.CompletionTokens += u.CompletionTokens
		s.TotalTokens += u.TotalTokens
		s.CacheReadInputTokens += u.CacheReadInputTokens
		s.CacheCreationInputTokens += u.CacheCreationInputTokens
		out[u.Model] = s
	}
	return out
}

// countEnded is how many buckets from start on have ended calls.
func countEnded(buckets []storage.CallsBucket, start time.Time) int {
	n := 0
	for _, b := range buckets {
		if !b.Start.Before(start) && b.LatencyCount > 0 {
			n++
		}
	}
	return n
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
