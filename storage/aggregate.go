package storage

import (
	"context"
	"fmt"
	"time"
)

// CallsAggregateQuery buckets the calls a calls query matches by start
// time, for charts. Calls is the filter (its sort, paging and columns are
// ignored); Start and End bound started_at (start inclusive, end
// exclusive) and BucketSeconds is the width of each bucket, counted from
// Start.
type CallsAggregateQuery struct {
	Calls         CallsQuery
	Start, End    time.Time
	BucketSeconds int64
}

// CallsBucket is one bucket with at least one call. Latency quantiles are
// linearly interpolated over the bucket's ended calls, in milliseconds;
// nil when none has ended.
type CallsBucket struct {
	Start      time.Time
	CallCount  int64
	ErrorCount int64 // calls with an exception
	LatencyP50 *float64
	LatencyP95 *float64
	LatencyP99 *float64
}

// ModelUsageBucket sums one model's summary.usage entries over a bucket's
// calls. Prompt tokens add prompt_tokens and input_tokens, completion
// tokens completion_tokens and output_tokens, as costs do.
type ModelUsageBucket struct {
	Start            time.Time
	Model            string
	Requests         int64
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
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

// MaxAggregateBuckets bounds how many buckets one aggregate query spans.
const MaxAggregateBuckets = 2000

// MaxAggregateBucketSeconds bounds a bucket's width: 100 years (of 365.25
// days). Wider buckets could not be told from one, and the width in
// milliseconds, and as a time.Duration, must not overflow.
const MaxAggregateBucketSeconds = 36525 * 24 * 3600

// Validate refuses a query whose bucket width is outside 1 through
// MaxAggregateBucketSeconds, whose end is not after its start, or whose
// range spans more than MaxAggregateBuckets buckets, as
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
	span := q.End.Unix() - q.Start.Unix() // at most about 3e11 between years 1 and 9999
	if n := span / q.BucketSeconds; n >= MaxAggregateBuckets {
		return fmt.Errorf("the range spans %d buckets of bucket_seconds=%d; at most %d fit in one query: widen bucket_seconds or narrow start and end: %w",
			n+1, q.BucketSeconds, MaxAggregateBuckets, ErrInvalidArgument)
	}
	return nil
}

// BucketStart is the start of the bucket with index i from q.Start. It
// adds whole seconds, as i times the width may not fit a time.Duration.
func (q CallsAggregateQuery) BucketStart(i int64) time.Time {
	start := q.Start.UTC()
	return time.Unix(start.Unix()+i*q.BucketSeconds, int64(start.Nanosecond())).UTC()
}
