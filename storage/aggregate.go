package storage

import (
	"context"
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

// BucketStart is the start of the bucket with index i from q.Start.
func (q CallsAggregateQuery) BucketStart(i int64) time.Time {
	return q.Start.UTC().Add(time.Duration(i*q.BucketSeconds) * time.Second)
}
