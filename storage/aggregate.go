package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage/latencyhist"
)

// CallsAggregateQuery buckets the calls a calls query matches by start
// time, for charts. Calls is the filter (its sort, paging and columns are
// ignored); Start and End bound started_at (start inclusive, end
// exclusive) and BucketSeconds is the width of each bucket, counted from
// Origin, or from Start when Origin is zero. An Origin before Start
// aligns the buckets (to a time zone's midnight, say) while the first
// bucket still counts only the calls from Start on.
type CallsAggregateQuery struct {
	Calls         CallsQuery
	Start, End    time.Time
	Origin        time.Time
	BucketSeconds int64
	// MaxBuckets bounds the buckets of the range: 0 is
	// MaxAggregateBuckets, and no query spans more than MaxStatsBuckets.
	MaxBuckets int64
	// Quantiles are latency quantile levels (0 through 1) each bucket
	// answers in LatencyQuantiles, besides p50, p95 and p99.
	Quantiles []float64
	// LatencyHistograms asks for each bucket's latency histogram, so a
	// caller may merge buckets and read quantiles of the merged range. A
	// store without histograms answers without them.
	LatencyHistograms bool
}

// CallsBucket is one bucket with at least one call. Latencies are those
// of the bucket's ended calls, in milliseconds; quantiles are linearly
// interpolated; the pointers are nil when no call has ended. A store that
// keeps latency histograms may answer quantiles, minimum and maximum
// within half a histogram bin; counts and the sum are exact.
type CallsBucket struct {
	Start      time.Time
	CallCount  int64
	ErrorCount int64 // calls with an exception
	LatencyP50 *float64
	LatencyP95 *float64
	LatencyP99 *float64
	// LatencyCount is how many of the calls have ended, LatencySum their
	// latencies added up.
	LatencyCount int64
	LatencySum   float64
	LatencyMin   *float64
	LatencyMax   *float64
	// LatencyQuantiles are the query's Quantiles, in its order.
	LatencyQuantiles []*float64
	// LatencyHistogram holds the ended calls' latencies when the query
	// asked for histograms and the store keeps them; nil otherwise.
	LatencyHistogram *latencyhist.Histogram
}

// ModelUsageBucket sums one model's summary.usage entries over a bucket's
// calls. Prompt tokens add prompt_tokens and input_tokens, completion
// tokens completion_tokens and output_tokens, as costs do; Entries is how
// many of the calls have an entry for the model.
type ModelUsageBucket struct {
	Start                    time.Time
	Model                    string
	Entries                  int64
	Requests                 int64
	PromptTokens             int64
	CompletionTokens         int64
	TotalTokens              int64
	CacheReadInputTokens     int64
	CacheCreationInputTokens int64
}

// CallsAggregate is the answer of an aggregate query, both lists in
// bucket order (then model order for usage).
type CallsAggregate struct {
	Buckets []CallsBucket
	Usage   []ModelUsageBucket
}

// CallsAggregator answers aggregate queries, scoped to the query's project.
type CallsAggregator interface {
	// AggregateCalls buckets the matching, non-deleted calls. A bucket
	// width that is not positive, or a range with more buckets than
	// MaxAggregateBuckets, is ErrInvalidArgument.
	AggregateCalls(ctx context.Context, q CallsAggregateQuery) (CallsAggregate, error)
}

// MaxAggregateBuckets bounds how many buckets one aggregate query spans
// unless it asks for more (CallsAggregateQuery.MaxBuckets).
const MaxAggregateBuckets = 2000

// MaxStatsBuckets bounds how many buckets any aggregate query spans: the
// reference's 10,000 for call statistics, and the one an origin before
// the start may add.
const MaxStatsBuckets = 10_001

// MaxAggregateBucketSeconds bounds a bucket's width: 100 years (of 365.25
// days). Wider buckets could not be told from one, and the width in
// milliseconds, and as a time.Duration, must not overflow.
const MaxAggregateBucketSeconds = 36525 * 24 * 3600

// Validate refuses a query whose bucket width is outside 1 through
// MaxAggregateBucketSeconds, whose end is not after its start, whose
// origin is after its start, whose quantile levels are outside 0 through
// 1, or whose range spans more buckets than it may (MaxBuckets), as
// ErrInvalidArgument. It counts in whole seconds, so neither a width nor a
// range of any size overflows (a time.Duration holds only 292 years).
func (q CallsAggregateQuery) Validate() error {
	if q.BucketSeconds < 1 || q.BucketSeconds > MaxAggregateBucketSeconds {
		return fmt.Errorf("bucket_seconds must be between 1 and %d (100 years), got %d: %w",
			MaxAggregateBucketSeconds, q.BucketSeconds, ErrInvalidArgument)
	}
	if !q.End.After(q.Start) {
		return fmt.Errorf("end must be after start: %w", ErrInvalidArgument)
	}
	if q.Origin.After(q.Start) {
		return fmt.Errorf("the buckets' origin must not be after start: %w", ErrInvalidArgument)
	}
	for _, l := range q.Quantiles {
		if !(l >= 0 && l <= 1) {
			return fmt.Errorf("quantile levels must be between 0 and 1, got %v: %w", l, ErrInvalidArgument)
		}
	}
	limit := q.MaxBuckets
	if limit <= 0 {
		limit = MaxAggregateBuckets
	}
	limit = min(limit, MaxStatsBuckets)
	// Buckets the range touches, its end exclusive: at most about 3e11
	// seconds between years 1 and 9999.
	from, to := q.BucketOrigin(), q.End.UTC()
	span := to.Unix() - from.Unix()
	if to.Nanosecond() > from.Nanosecond() {
		span++
	}
	if n := (span + q.BucketSeconds - 1) / q.BucketSeconds; n > limit {
		return fmt.Errorf("the range spans %d buckets of bucket_seconds=%d; at most %d fit in one query: widen bucket_seconds or narrow start and end: %w",
			n, q.BucketSeconds, limit, ErrInvalidArgument)
	}
	return nil
}

// BucketOrigin is where bucket 0 starts: Origin, or Start without one.
func (q CallsAggregateQuery) BucketOrigin() time.Time {
	if q.Origin.IsZero() {
		return q.Start.UTC()
	}
	return q.Origin.UTC()
}

// BucketStart is the start of the bucket with index i from the origin. It
// adds whole seconds, as i times the width may not fit a time.Duration.
func (q CallsAggregateQuery) BucketStart(i int64) time.Time {
	start := q.BucketOrigin()
	return time.Unix(start.Unix()+i*q.BucketSeconds, int64(start.Nanosecond())).UTC()
}
