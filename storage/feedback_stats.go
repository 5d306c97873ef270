package storage

import (
	"context"
	"encoding/json"
	"time"
)

// The value types a feedback payload path is read as.
const (
	FeedbackNumeric     = "numeric"     // a JSON number
	FeedbackBoolean     = "boolean"     // true as 1, false as 0
	FeedbackCategorical = "categorical" // a JSON string
)

// The functions of a feedback statistic. Each skips the rows whose value
// is missing or of another type.
const (
	StatSum        = "sum"
	StatAvg        = "avg"
	StatMin        = "min"
	StatMax        = "max"
	StatCount      = "count"
	StatCountTrue  = "count_true"  // values equal to 1
	StatCountFalse = "count_false" // values equal to 0
	StatQuantile   = "quantile"    // linearly interpolated, at Level
)

// MaxFeedbackStatsBuckets bounds the buckets of one statistics query.
const MaxFeedbackStatsBuckets = 10_000

// MaxFeedbackSamples bounds the payloads one sample query returns.
const MaxFeedbackSamples = 5000

// FeedbackFilter selects a project's feedback rows created in
// [Start, End), optionally of one feedback_type and one trigger_ref (or,
// with TriggerPrefix, the trigger refs starting with it).
type FeedbackFilter struct {
	ProjectID     string
	Start, End    time.Time
	FeedbackType  *string
	TriggerRef    *string
	TriggerPrefix bool
}

// FeedbackMetric is a payload path read as one value type. Keys are
// literal (a key may hold spaces); the caller validates them.
type FeedbackMetric struct {
	Path []string
	Type string
}

// FeedbackStat is one statistic of Metrics[Metric].
type FeedbackStat struct {
	Metric int
	Func   string
	Level  float64 // for StatQuantile, in [0, 1]
}

// FeedbackStatsQuery computes Stats over the rows of the filter, per
// bucket and over the whole window. Bucket i holds the rows created in
// [Origin + i*BucketSeconds, Origin + (i+1)*BucketSeconds).
type FeedbackStatsQuery struct {
	FeedbackFilter
	Metrics       []FeedbackMetric
	Stats         []FeedbackStat
	Origin        time.Time
	BucketSeconds int64
}

// FeedbackStatsBucket is one bucket with rows: its index, its row count
// and one value per Stats entry (nil where no row had a value; counts
// are never nil).
type FeedbackStatsBucket struct {
	Index  int64
	Count  int64
	Values []*float64
}

// FeedbackStatsResult holds the buckets with rows, in index order, and
// the statistics over the whole window.
type FeedbackStatsResult struct {
	Buckets []FeedbackStatsBucket
	Window  []*float64
}

// The dimensions a feedback aggregate groups by. The scorer id is the
// object id of runnable_ref (its last path segment, before any ':'); the
// span fields read as their stored defaults when unset.
var FeedbackAggregateDimensions = []string{"scorer_id", "span_agent_name", "span_agent_version", "span_status_code"}

// FeedbackAggregateQuery counts scorer output (scorer_tags and
// scorer_ratings) of a project's feedback created in [After, Before),
// per time bucket (when BucketSeconds > 0) and per GroupBy dimension.
// Filters combine with AND, the values of one filter with OR:
// FeedbackTypes are prefixes; MonitorIDs and ScorerIDs match the object
// id of trigger_ref and runnable_ref exactly, or as a prefix when they
// end with '*'; SpanTypes match the second to last segment of weave_ref;
// Tags match any scorer tag; the rating bounds keep the rows whose
// '_rating_' rating lies within them.
type FeedbackAggregateQuery struct {
	ProjectID      string
	After, Before  time.Time
	BucketSeconds  int64
	FeedbackTypes  []string
	MonitorIDs     []string
	ScorerIDs      []string
	SpanAgentNames []string
	SpanTypes      []string
	Tags           []string
	RatingMin      *float64
	RatingMax      *float64
	GroupBy        []string
}

// FeedbackAggregateGroup is one (bucket, group) with rows. Buckets align
// as ClickHouse's toStartOfInterval does in UTC: widths in whole hours
// from the start of each day, other widths from the Unix epoch.
type FeedbackAggregateGroup struct {
	BucketStart  *time.Time // nil when not bucketed
	Group        []string   // values of GroupBy, in its order
	TotalCount   int64
	ScoredCount  int64 // rows with at least one tag or rating
	TagCounts    map[string]int64
	RatingCounts map[string]int64
	RatingSums   map[string]float64
}

// FeedbackAnalyzer answers the statistics over a project's feedback.
// Every method is scoped to its project and bounded: results are per
// bucket and group, never per row, and samples are limited.
type FeedbackAnalyzer interface {
	// FeedbackStats computes q; a query whose buckets would outnumber
	// MaxFeedbackStatsBuckets is ErrInvalidArgument.
	FeedbackStats(ctx context.Context, q FeedbackStatsQuery) (FeedbackStatsResult, error)
	// AggregateFeedback groups q's rows: ordered by bucket, or by the
	// group's values when not bucketed. Without bucket and GroupBy it
	// returns exactly one group, empty or not.
	AggregateFeedback(ctx context.Context, q FeedbackAggregateQuery) ([]FeedbackAggregateGroup, error)
	// SampleFeedbackPayloads returns the newest payload of each distinct
	// trigger_ref (rows without one count as one) among f's rows, at most
	// limit (up to MaxFeedbackSamples) of them.
	SampleFeedbackPayloads(ctx context.Context, f FeedbackFilter, limit int) ([]json.RawMessage, error)
}
