package automations

import (
	"context"
	"time"

	"github.com/weftdev/weft/storage"
)

// UsagePricer prices a project's per-model usage as include_costs prices
// calls: the project's prices, then the default table.
type UsagePricer func(ctx context.Context, projectID string, usage []storage.ModelUsageBucket) (float64, error)

// Measurer measures conditions over a store's calls.
type Measurer struct {
	Calls storage.CallsAggregator
	// Price prices usage for the cost metric; nil prices it at 0.
	Price UsagePricer
}

// Measurement is a condition's metric over a window and how many calls
// the window held.
type Measurement struct {
	Value float64
	Calls int64
	Start time.Time
	End   time.Time
}

// Measure computes c's metric over the window that ends at end (to the
// second), as one aggregate bucket.
func (m Measurer) Measure(ctx context.Context, projectID string, c Condition, end time.Time) (Measurement, error) {
	q, err := c.CallsQuery(projectID)
	if err != nil {
		return Measurement{}, err
	}
	end = end.UTC().Truncate(time.Second)
	out := Measurement{Start: end.Add(-time.Duration(c.WindowSeconds) * time.Second), End: end}
	agg, err := m.Calls.AggregateCalls(ctx, storage.CallsAggregateQuery{Calls: q, Start: out.Start, End: end,
		BucketSeconds: c.WindowSeconds})
	if err != nil {
		return out, err
	}
	var b storage.CallsBucket
	for _, x := range agg.Buckets {
		b.CallCount += x.CallCount
		b.ErrorCount += x.ErrorCount
		b.LatencyP50, b.LatencyP95, b.LatencyP99 = x.LatencyP50, x.LatencyP95, x.LatencyP99
	}
	out.Calls = b.CallCount
	switch c.Metric {
	case MetricCallCount:
		out.Value = float64(b.CallCount)
	case MetricErrorCount:
		out.Value = float64(b.ErrorCount)
	case MetricErrorRate:
		if b.CallCount > 0 {
			out.Value = float64(b.ErrorCount) / float64(b.CallCount)
		}
	case MetricLatencyP50:
		out.Value = deref(b.LatencyP50)
	case MetricLatencyP95:
		out.Value = deref(b.LatencyP95)
	case MetricLatencyP99:
		out.Value = deref(b.LatencyP99)
	case MetricTotalTokens:
		for _, u := range agg.Usage {
			out.Value += float64(max(u.TotalTokens, u.PromptTokens+u.CompletionTokens))
		}
	case MetricCost:
		if m.Price != nil && len(agg.Usage) > 0 {
			out.Value, err = m.Price(ctx, projectID, agg.Usage)
		}
	}
	return out, err
}

// deref is a latency, 0 when no call has ended.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
