package automations

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/latencyhist"
)

// maxSharedWindowSeconds bounds the windows read together: the shared
// read's per-minute buckets, one more for the partial last minute and
// one for the start's rounding, must fit one aggregate query.
const maxSharedWindowSeconds = (storage.MaxStatsBuckets - 2) * 60

// seriesKey tells which conditions read the same calls: a windowKey
// without the window's length.
func (k windowKey) seriesKey() windowKey {
	k.seconds = 0
	return k
}

// windows measures every window length in seconds (distinct, each at
// most maxSharedWindowSeconds) of c's calls, all ending at end, from one
// read: the per-minute buckets of the longest window. Each window is the
// suffix of those minutes from its own start, so counts, errors and usage
// add up to what a read of the window alone answers. Latency quantiles
// come from the minutes' merged histograms, by the rule a store with
// histograms answers one window with; a store that answers without them
// leaves the latency of each window to a read of its own (see value).
func (m Measurer) windows(ctx context.Context, projectID string, c Condition, seconds []int64, end time.Time) (map[int64]*window, error) {
	q, err := c.CallsQuery(projectID)
	if err != nil {
		return nil, err
	}
	end = end.UTC().Truncate(time.Second)
	seconds = slices.Clone(seconds)
	slices.Sort(seconds) // shortest first: the sweep below runs from the end back
	longest := end.Add(-time.Duration(seconds[len(seconds)-1]) * time.Second).Truncate(time.Minute)
	span := int64(end.Sub(longest) / time.Second)
	agg, err := m.Calls.AggregateCalls(ctx, storage.CallsAggregateQuery{Calls: q, Start: longest, End: end,
		BucketSeconds: 60, MaxBuckets: (span+59)/60 + 1, LatencyHistograms: true})
	if err != nil {
		return nil, err
	}
	histograms := true
	for _, b := range agg.Buckets {
		if b.LatencyCount > 0 && b.LatencyHistogram == nil {
			histograms = false
		}
	}
	out := make(map[int64]*window, len(seconds))
	var (
		sum   storage.CallsBucket
		hist  latencyhist.Histogram
		usage = map[string]*storage.ModelUsageBucket{}
		i, j  = len(agg.Buckets) - 1, len(agg.Usage) - 1
	)
	for _, s := range seconds {
		start := end.Add(-time.Duration(s) * time.Second).Truncate(time.Minute)
		for ; i >= 0 && !agg.Buckets[i].Start.Before(start); i-- {
			b := agg.Buckets[i]
			sum.CallCount += b.CallCount
			sum.ErrorCount += b.ErrorCount
			if b.LatencyHistogram != nil {
				hist.Merge(b.LatencyHistogram)
			}
		}
		for ; j >= 0 && !agg.Usage[j].Start.Before(start); j-- {
			addUsage(usage, agg.Usage[j])
		}
		w := &window{start: start, end: end, ownLatency: !histograms}
		if sum.CallCount > 0 {
			b := storage.CallsBucket{Start: start, CallCount: sum.CallCount, ErrorCount: sum.ErrorCount}
			if histograms {
				b.LatencyP50, b.LatencyP95, b.LatencyP99 = quantile(&hist, 0.5), quantile(&hist, 0.95), quantile(&hist, 0.99)
			}
			w.agg.Buckets = []storage.CallsBucket{b}
		}
		w.agg.Usage = usageList(usage, start)
		out[s] = w
	}
	return out, nil
}

// addUsage adds u to its model's sums.
func addUsage(sums map[string]*storage.ModelUsageBucket, u storage.ModelUsageBucket) {
	to := sums[u.Model]
	if to == nil {
		to = &storage.ModelUsageBucket{Model: u.Model}
		sums[u.Model] = to
	}
	to.Entries += u.Entries
	to.Requests += u.Requests
	to.PromptTokens += u.PromptTokens
	to.CompletionTokens += u.CompletionTokens
	to.TotalTokens += u.TotalTokens
	to.CacheReadInputTokens += u.CacheReadInputTokens
	to.CacheCreationInputTokens += u.CacheCreationInputTokens
}

// usageList is sums as one bucket from start, in model order as an
// aggregate lists them.
func usageList(sums map[string]*storage.ModelUsageBucket, start time.Time) []storage.ModelUsageBucket {
	if len(sums) == 0 {
		return nil
	}
	out := make([]storage.ModelUsageBucket, 0, len(sums))
	for _, u := range sums {
		v := *u
		v.Start = start
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b storage.ModelUsageBucket) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// quantile is h's q-quantile, nil when h is empty.
func quantile(h *latencyhist.Histogram, q float64) *float64 {
	v, ok := h.Quantile(q)
	if !ok {
		return nil
	}
	return &v
}

// roundWindows are the windows a round has measured and, per series of
// conditions on the same calls, the window lengths the round's
// conditions ask for.
type roundWindows struct {
	lengths  map[windowKey][]int64 // by seriesKey: distinct lengths up to maxSharedWindowSeconds
	measured map[windowKey]*window
	failed   map[windowKey]error // by seriesKey: a shared read that failed, not made again this round
}

func newRoundWindows() *roundWindows {
	return &roundWindows{lengths: map[windowKey][]int64{}, measured: map[windowKey]*window{}, failed: map[windowKey]error{}}
}

// plan notes that a condition of the round measures window k.
func (r *roundWindows) plan(k windowKey) {
	s := k.seriesKey()
	if k.seconds <= maxSharedWindowSeconds && !slices.Contains(r.lengths[s], k.seconds) {
		r.lengths[s] = append(r.lengths[s], k.seconds)
	}
}

// measure measures window k of c (not measured yet): with the other
// planned lengths of its series from one read when there are several,
// else alone.
func (r *roundWindows) measure(ctx context.Context, m Measurer, projectID string, c Condition, k windowKey, end time.Time) (*window, error) {
	s := k.seriesKey()
	lengths := r.lengths[s]
	if len(lengths) < 2 || !slices.Contains(lengths, k.seconds) {
		w, err := m.window(ctx, projectID, c, end)
		if err != nil {
			return nil, err
		}
		r.measured[k] = w
		return w, nil
	}
	if err := r.failed[s]; err != nil {
		return nil, err
	}
	ws, err := m.windows(ctx, projectID, c, lengths, end)
	if err != nil {
		r.failed[s] = err
		return nil, err
	}
	for seconds, w := range ws {
		k := s
		k.seconds = seconds
		r.measured[k] = w
	}
	return r.measured[k], nil
}
