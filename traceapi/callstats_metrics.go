package traceapi

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// The metrics of /calls/stats and how each bucket names them: for every
// aggregation "{agg}_{metric}" and for every percentile "p{p}_{metric}"
// (p95_latency_ms, p99.9_latency_ms), then "count", the bucket's calls
// (call metrics) or its calls with an entry for the model (usage
// metrics). Sums, averages and counts of an empty bucket are 0; minima,
// maxima and percentiles of no values are null.

// metricSpecIn is a CallMetricSpec or UsageMetricSpec as sent. Without
// aggregations a metric is summed, as the reference's default.
type metricSpecIn struct {
	Metric       string    `json:"metric"`
	Aggregations *[]string `json:"aggregations"`
	Percentiles  []float64 `json:"percentiles"`
}

// aggregations the reference's AggregationType names.
var aggregationNames = []string{"sum", "avg", "min", "max", "count", "count_true", "count_false"}

// statsMetric is one metric spec resolved: its aggregations and
// percentiles, in the order the bucket keys follow.
type statsMetric struct {
	name        string
	aggs        []string
	percentiles []percentile
}

// percentile is one requested percentile: its key prefix and its level
// (0 through 1).
type percentile struct {
	alias string
	level float64
}

// costMetrics are the cost metrics asked for: always summed, priced from
// the token sums, as the reference computes them after its query.
type costMetrics struct{ input, output, total bool }

func (c costMetrics) any() bool { return c.input || c.output || c.total }

// callMetricAggs are the aggregations each call metric is served with:
// counts are sums of 0 and 1 per call, so every aggregation derives from
// them; a latency's count_true and count_false (latencies of exactly 1
// and 0 ms) are not kept.
var callMetricAggs = map[string][]string{
	"call_count":  aggregationNames,
	"error_count": aggregationNames,
	"latency_ms":  {"sum", "avg", "min", "max", "count"},
}

// usageTokenMetrics are the token metrics, served from each bucket's
// per-model sums: sum, avg and count.
var usageTokenMetrics = []string{"input_tokens", "output_tokens", "total_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}

// usageCostMetrics are the cost metrics.
var usageCostMetrics = []string{"input_cost", "output_cost", "total_cost"}

func callMetrics(in []metricSpecIn) ([]statsMetric, error) {
	out := make([]statsMetric, 0, len(in))
	for i, spec := range in {
		field := "call_metrics." + strconv.Itoa(i)
		allowed, ok := callMetricAggs[spec.Metric]
		if !ok {
			return nil, unknownMetric(field, spec.Metric, []string{"latency_ms", "call_count", "error_count"})
		}
		m, err := resolveSpec(field, spec, allowed, true)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func usageMetrics(in []metricSpecIn) ([]statsMetric, costMetrics, error) {
	var out []statsMetric
	var costs costMetrics
	for i, spec := range in {
		field := "usage_metrics." + strconv.Itoa(i)
		switch {
		case slices.Contains(usageCostMetrics, spec.Metric):
			if _, err := resolveSpec(field, spec, aggregationNames, true); err != nil {
				return nil, costs, err // still the reference's schema
			}
			costs.input = costs.input || spec.Metric == "input_cost"
			costs.output = costs.output || spec.Metric == "output_cost"
			costs.total = costs.total || spec.Metric == "total_cost"
		case slices.Contains(usageTokenMetrics, spec.Metric):
			m, err := resolveSpec(field, spec, []string{"sum", "avg", "count"}, false)
			if err != nil {
				return nil, costs, err
			}
			out = append(out, m)
		default:
			return nil, costs, unknownMetric(field, spec.Metric, append(slices.Clone(usageTokenMetrics), usageCostMetrics...))
		}
	}
	// Costs are priced from the token sums, which the buckets then show.
	if costs.input || costs.total {
		out = ensureSum(out, "input_tokens")
	}
	if costs.output || costs.total {
		out = ensureSum(out, "output_tokens")
	}
	return out, costs, nil
}

// ensureSum makes metric summed: its spec gains sum, or a summed spec of
// it is added.
func ensureSum(ms []statsMetric, metric string) []statsMetric {
	for i, m := range ms {
		if m.name == metric {
			if !slices.Contains(m.aggs, "sum") {
				ms[i].aggs = append(slices.Clone(m.aggs), "sum")
			}
			return ms
		}
	}
	return append(ms, statsMetric{name: metric, aggs: []string{"sum"}})
}

// resolveSpec checks spec's aggregations and percentiles: a name outside
// AggregationType is the reference's schema error (422), one the metric
// is not served with or a percentile outside 0 through 100 a 400.
func resolveSpec(field string, spec metricSpecIn, allowed []string, percentiles bool) (statsMetric, error) {
	m := statsMetric{name: spec.Metric, aggs: []string{"sum"}}
	if spec.Aggregations != nil {
		m.aggs = *spec.Aggregations
	}
	for j, a := range m.aggs {
		f := field + ".aggregations." + strconv.Itoa(j)
		if !slices.Contains(aggregationNames, a) {
			return m, &wire.FieldError{Field: f, Schema: "enum", Msg: "Input should be " + quotedList(aggregationNames)}
		}
		if !slices.Contains(allowed, a) {
			return m, &wire.FieldError{Field: f, Msg: fmt.Sprintf("%s of %s is not served: use %s", a, spec.Metric, strings.Join(allowed, ", "))}
		}
	}
	for j, p := range spec.Percentiles {
		f := field + ".percentiles." + strconv.Itoa(j)
		if !percentiles {
			return m, &wire.FieldError{Field: f, Msg: fmt.Sprintf("percentiles of %s are not served: use %s", spec.Metric, strings.Join(allowed, ", "))}
		}
		if !(p >= 0 && p <= 100) {
			return m, &wire.FieldError{Field: f, Msg: fmt.Sprintf("Percentile must be between 0 and 100, got %v", p)}
		}
		m.percentiles = append(m.percentiles, percentile{alias: percentileName(p) + "_" + spec.Metric, level: percentileLevel(p)})
	}
	if len(m.aggs) == 0 && len(m.percentiles) == 0 {
		m.aggs = []string{"sum"}
	}
	return m, nil
}

// percentileLevel is percentile p (0-100) as a quantile level, rounded
// so that levels compare equal however p was written.
func percentileLevel(p float64) float64 { return math.Round(p/100*1e6) / 1e6 }

// percentileText names a percentile as the reference does: whole ones as
// integers, others as Python prints a float.
func percentileText(p float64) string {
	if p == math.Trunc(p) {
		return strconv.FormatInt(int64(p), 10)
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}

func unknownMetric(field, got string, names []string) error {
	if got == "" {
		return wire.Missing(field+".metric", "")
	}
	return &wire.FieldError{Field: field + ".metric", Schema: wire.SchemaLiteral, Msg: "Input should be " + quotedList(names)}
}

// quotedList lists names as pydantic's literal errors do: 'a', 'b' or 'c'.
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// figures are one metric's values over one bucket, from which every
// aggregation reads.
type figures struct {
	sum         float64
	count       int64
	min, max    *float64
	ones, zeros int64
	quantile    func(i int, level float64) *float64
}

// set writes m's aggregations and percentiles of f into o.
func (m statsMetric) set(o *jsonObject, f figures) {
	for _, a := range m.aggs {
		var v any
		switch a {
		case "sum":
			v = f.sum
		case "avg":
			v = 0.0
			if f.count > 0 {
				v = f.sum / float64(f.count)
			}
		case "min":
			v = f.min
		case "max":
			v = f.max
		case "count":
			v = f.count
		case "count_true":
			v = f.ones
		case "count_false":
			v = f.zeros
		}
		o.set(a+"_"+m.name, v)
	}
	for i, p := range m.percentiles {
		o.set(p.alias, f.quantile(i, p.level))
	}
}

// callFigures are a call metric's figures over bucket b; latencyFrom is
// where the metric's percentiles start among the query's quantiles.
func callFigures(metric string, b *storage.CallsBucket, latencyFrom int) figures {
	n := b.CallCount
	switch metric {
	case "latency_ms":
		return figures{sum: b.LatencySum, count: b.LatencyCount, min: b.LatencyMin, max: b.LatencyMax,
			quantile: func(i int, _ float64) *float64 {
				if latencyFrom+i < len(b.LatencyQuantiles) {
					return b.LatencyQuantiles[latencyFrom+i]
				}
				return nil
			}}
	case "error_count":
		return binaryFigures(n, b.ErrorCount)
	}
	return binaryFigures(n, n) // call_count: 1 per call
}

// binaryFigures are the figures of n values of 0 or 1, ones of them 1.
func binaryFigures(n, ones int64) figures {
	f := figures{sum: float64(ones), count: n, ones: ones, zeros: n - ones,
		quantile: func(_ int, level float64) *float64 { return binaryQuantile(n, ones, level) }}
	if n > 0 {
		lo, hi := 0.0, 0.0
		if ones == n {
			lo = 1
		}
		if ones > 0 {
			hi = 1
		}
		f.min, f.max = &lo, &hi
	}
	return f
}

// binaryQuantile is the level-quantile of n values of 0 or 1, ones of
// them 1, interpolated linearly between the two nearest ranks as the
// reference's quantile is; nil for no values.
func binaryQuantile(n, ones int64, level float64) *float64 {
	if n == 0 {
		return nil
	}
	value := func(rank int64) float64 {
		if rank >= n-ones {
			return 1
		}
		return 0
	}
	pos := level * float64(n-1)
	lo := int64(math.Floor(pos))
	v := value(lo)
	if frac := pos - float64(lo); frac > 0 && lo+1 < n {
		v += frac * (value(lo+1) - v)
	}
	return &v
}

// usageFigures are a token metric's figures over one model's bucket.
func usageFigures(metric string, u *storage.ModelUsageBucket) figures {
	var sum int64
	switch metric {
	case "input_tokens":
		sum = u.PromptTokens
	case "output_tokens":
		sum = u.CompletionTokens
	case "total_tokens":
		sum = u.TotalTokens
	case "cache_read_input_tokens":
		sum = u.CacheReadInputTokens
	case "cache_creation_input_tokens":
		sum = u.CacheCreationInputTokens
	}
	return figures{sum: float64(sum), count: u.Entries}
}

// callBuckets lays the aggregate's buckets over every bucket of the
// range.
func (r *statsRequest) callBuckets(starts []time.Time, buckets []storage.CallsBucket) ([]any, error) {
	index := bucketIndex(starts)
	found := make([]*storage.CallsBucket, len(starts))
	for i := range buckets {
		j, ok := index[buckets[i].Start.UnixMilli()]
		if !ok {
			return nil, fmt.Errorf("the store answered a bucket at %v, outside the range", buckets[i].Start)
		}
		found[j] = &buckets[i]
	}
	latencyFrom := make([]int, len(r.calls))
	for i, n := 0, 0; i < len(r.calls); i++ {
		if r.calls[i].name == "latency_ms" {
			latencyFrom[i], n = n, n+len(r.calls[i].percentiles)
		}
	}
	out := make([]any, len(starts))
	for i, t := range starts {
		b := found[i]
		if b == nil {
			b = &storage.CallsBucket{}
		}
		o := &jsonObject{vals: map[string]any{}}
		o.set("timestamp", r.timestamp(t))
		for j, m := range r.calls {
			m.set(o, callFigures(m.name, b, latencyFrom[j]))
		}
		o.set("count", b.CallCount)
		out[i] = o
	}
	return out, nil
}

// usageBuckets lays the aggregate's per-model usage over every bucket of
// the range and every model with usage in it, bucket then model order,
// and prices the cost metrics.
func (r *statsRequest) usageBuckets(ctx context.Context, prices *enricher, starts []time.Time, usage []storage.ModelUsageBucket) ([]any, error) {
	index := bucketIndex(starts)
	type key struct {
		bucket int
		model  string
	}
	found := map[key]*storage.ModelUsageBucket{}
	var models []string
	for i := range usage {
		j, ok := index[usage[i].Start.UnixMilli()]
		if !ok {
			return nil, fmt.Errorf("the store answered usage at %v, outside the range", usage[i].Start)
		}
		found[key{j, usage[i].Model}] = &usage[i]
		models = append(models, usage[i].Model)
	}
	slices.Sort(models)
	models = slices.Compact(models)
	out := make([]any, 0, len(starts)*len(models))
	for i, t := range starts {
		for _, model := range models {
			u := found[key{i, model}]
			if u == nil {
				u = &storage.ModelUsageBucket{Start: t, Model: model}
			}
			o := &jsonObject{vals: map[string]any{}}
			o.set("timestamp", r.timestamp(t))
			o.set("model", model)
			for _, m := range r.usage {
				m.set(o, usageFigures(m.name, u))
			}
			o.set("count", u.Entries)
			if r.costs.any() {
				c, err := costOf(ctx, prices, *u)
				if err != nil {
					return nil, err
				}
				for _, cost := range []struct {
					asked bool
					name  string
					value float64
				}{{r.costs.input, "sum_input_cost", c.input}, {r.costs.output, "sum_output_cost", c.output}, {r.costs.total, "sum_total_cost", c.total}} {
					if cost.asked {
						o.set(cost.name, cost.value)
					}
				}
			}
			out = append(out, o)
		}
	}
	return out, nil
}
