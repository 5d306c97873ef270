package automations

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

// withoutHistograms is a store that answers aggregates without latency
// histograms, as ClickHouse does.
type withoutHistograms struct{ storage.CallsAggregator }

func (s withoutHistograms) AggregateCalls(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	agg, err := s.CallsAggregator.AggregateCalls(ctx, q)
	for i := range agg.Buckets {
		agg.Buckets[i].LatencyHistogram = nil
	}
	return agg, err
}

// countingAggregator counts the reads.
type countingAggregator struct {
	storage.CallsAggregator
	reads int
}

func (s *countingAggregator) AggregateCalls(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	s.reads++
	return s.CallsAggregator.AggregateCalls(ctx, q)
}

// TestWindowsReadTogetherMatchAlone measures windows of many lengths
// from one shared read and each alone, on a real store with calls over a
// day: counts, errors, tokens and cost are the same; latencies are the
// same where the shared read has histograms (the store takes quantiles
// of merged minute histograms either way) and come from a read of the
// window alone where it has none.
func TestWindowsReadTogetherMatchAlone(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	const project = "e/alerts"
	end := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).Add(-37 * time.Second) // inside a minute
	var ops []storage.CallOp
	const calls = 3000
	for k := range calls {
		started := end.Add(-25 * time.Hour).Add(time.Duration(k) * 25 * time.Hour / calls)
		ended := started.Add(time.Duration(20+k*7919%5000) * time.Millisecond)
		c := storage.Call{ProjectID: project, ID: fmt.Sprintf("c%05d", k), TraceID: fmt.Sprintf("t%05d", k),
			OpName: []string{"chat", "embed", "rank"}[k%3], StartedAt: started, EndedAt: &ended,
			Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`), Output: json.RawMessage(`null`),
			Summary: json.RawMessage(fmt.Sprintf(`{"usage":{"%s":{"input_tokens":%d,"output_tokens":%d,"requests":1}}}`,
				[]string{"gpt-4o", "claude"}[k%2], 100+k%37, 10+k%11))}
		if k%13 == 0 {
			boom := "boom"
			c.Exception = &boom
		}
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	price := func(_ context.Context, _ string, usage []storage.ModelUsageBucket) (float64, error) {
		var c float64
		for _, u := range usage {
			c += float64(u.PromptTokens)*2.5e-6 + float64(u.CompletionTokens)*1e-5
		}
		return c, nil
	}
	lengths := []int64{60, 300, 301, 899, 3600, 3661, 4 * 3600, 86400 - 59, 86400}
	metrics := []string{MetricCallCount, MetricErrorCount, MetricErrorRate, MetricTotalTokens, MetricCost,
		MetricLatencyP50, MetricLatencyP95, MetricLatencyP99}
	for name, calls := range map[string]storage.CallsAggregator{"histograms": s, "no histograms": withoutHistograms{s}} {
		for _, ops := range [][]string{nil, {"chat"}} {
			counting := &countingAggregator{CallsAggregator: calls}
			shared, alone := Measurer{Calls: counting, Price: price}, Measurer{Calls: calls, Price: price}
			c := Condition{OpNames: ops, Comparator: ">", WindowSeconds: lengths[0]}
			ws, err := shared.windows(ctx, project, c, lengths, end)
			if err != nil {
				t.Fatal(err)
			}
			for _, seconds := range lengths {
				for _, metric := range metrics {
					c.WindowSeconds, c.Metric = seconds, metric
					got, err := shared.value(ctx, project, c, ws[seconds])
					if err != nil {
						t.Fatal(err)
					}
					want, err := alone.Measure(ctx, project, c, end)
					if err != nil {
						t.Fatal(err)
					}
					if got != want && !(latencyMetric(metric) && math.Abs(got.Value-want.Value) <= 0.004*want.Value) {
						t.Errorf("%s, ops %v, %d s, %s: together %+v, alone %+v", name, ops, seconds, metric, got, want)
					}
					if seconds >= 3600 && (want.Calls == 0 || want.Value == 0) { // the short ones may hold no call or error
						t.Errorf("%s, ops %v, %d s, %s: alone %+v, want a window with calls and a value", name, ops, seconds, metric, want)
					}
				}
			}
			wantReads := 1
			if name == "no histograms" {
				wantReads += len(lengths) // each window's latency alone, once for its three quantiles
			}
			if counting.reads != wantReads {
				t.Errorf("%s, ops %v: %d reads, want %d", name, ops, counting.reads, wantReads)
			}
		}
	}
}
