package automations

import (
	"context"
	"encoding/json"
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

// window is the aggregate of one project's calls of one query over one
// window: every metric of the conditions that share them comes from it.
type window struct {
	agg        storage.CallsAggregate
	start, end time.Time
	cost       *float64 // priced once, when a condition asks
	// ownLatency is set on a window measured from a shared read without
	// latency histograms: its latencies come from a read of its own,
	// made once, when a condition asks (latency).
	ownLatency bool
	latency    *storage.CallsAggregate
}

// windowKey tells which conditions share a window.
type windowKey struct {
	project, query string
	seconds        int64
}

func (c Condition) windowKey(projectID string) windowKey {
	q, _ := json.Marshal(struct {
		Ops    []string        `json:"o,omitempty"`
		Filter any             `json:"f,omitempty"`
		Query  json.RawMessage `json:"q,omitempty"`
	}{c.OpNames, c.Filter, c.queryDoc()})
	return windowKey{project: projectID, query: string(q), seconds: c.WindowSeconds}
}

// Measure computes c's metric over the trailing window that ends at end.
func (m Measurer) Measure(ctx context.Context, projectID string, c Condition, end time.Time) (Measurement, error) {
	w, err := m.window(ctx, projectID, c, end)
	if err != nil {
		return Measurement{}, err
	}
	return m.value(ctx, projectID, c, w)
}

// window aggregates the calls of c's window as one bucket. The window
// starts on the whole minute at or before end minus its length (so it
// may hold up to a minute more), which lets a store answer the whole
// minutes from its per-minute rollups and read only the last, partial
// minute's calls.
func (m Measurer) window(ctx context.Context, projectID string, c Condition, end time.Time) (*window, error) {
	q, err := c.CallsQuery(projectID)
	if err != nil {
		return nil, err
	}
	end = end.UTC().Truncate(time.Second)
	start := end.Add(-time.Duration(c.WindowSeconds) * time.Second).Truncate(time.Minute)
	span := int64(end.Sub(start) / time.Second)
	agg, err := m.Calls.AggregateCalls(ctx, storage.CallsAggregateQuery{Calls: q, Start: start, End: end,
		BucketSeconds: (span + 59) / 60 * 60})
	if err != nil {
		return nil, err
	}
	return &window{agg: agg, start: start, end: end}, nil
}

// value is c's metric over w.
func (m Measurer) value(ctx context.Context, projectID string, c Condition, w *window) (Measurement, error) {
	out := Measurement{Start: w.start, End: w.end}
	var b storage.CallsBucket
	for _, x := range w.agg.Buckets {
		b.CallCount += x.CallCount
		b.ErrorCount += x.ErrorCount
		b.LatencyP50, b.LatencyP95, b.LatencyP99 = x.LatencyP50, x.LatencyP95, x.LatencyP99
	}
	if latencyMetric(c.Metric) && w.ownLatency {
		own, err := m.latency(ctx, projectID, c, w)
		if err != nil {
			return out, err
		}
		b.LatencyP50, b.LatencyP95, b.LatencyP99 = nil, nil, nil
		for _, x := range own.Buckets {
			b.LatencyP50, b.LatencyP95, b.LatencyP99 = x.LatencyP50, x.LatencyP95, x.LatencyP99
		}
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
		for _, u := range w.agg.Usage {
			out.Value += float64(max(u.TotalTokens, u.PromptTokens+u.CompletionTokens))
		}
	case MetricCost:
		if w.cost == nil {
			var cost float64
			if m.Price != nil && len(w.agg.Usage) > 0 {
				var err error
				if cost, err = m.Price(ctx, projectID, w.agg.Usage); err != nil {
					return out, err
				}
			}
			w.cost = &cost
		}
		out.Value = *w.cost
	}
	return out, nil
}

// latency is w's aggregate read alone, for its latencies.
func (m Measurer) latency(ctx context.Context, projectID string, c Condition, w *window) (*storage.CallsAggregate, error) {
	if w.latency == nil {
		own, err := m.window(ctx, projectID, c, w.end)
		if err != nil {
			return nil, err
		}
		w.latency = &own.agg
	}
	return w.latency, nil
}

// latencyMetric reports whether metric is a latency quantile.
func latencyMetric(metric string) bool {
	return metric == MetricLatencyP50 || metric == MetricLatencyP95 || metric == MetricLatencyP99
}

// deref is a latency, 0 when no call has ended.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
