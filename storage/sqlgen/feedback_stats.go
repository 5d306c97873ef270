package sqlgen

import (
	"fmt"
	"strconv"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// FeedbackStatsDialect is a Dialect with what the feedback statistics
// read beyond it. doc arguments are JSON text; path arguments are bound
// JSONPath values.
type FeedbackStatsDialect interface {
	Dialect
	// JSONNumber is the number at path as a double, NULL when the path
	// is missing or holds anything but a number (a numeric string too).
	JSONNumber(doc, path string) string
	// JSONBool is 1.0 for true and 0.0 for false at path, else NULL.
	JSONBool(doc, path string) string
	// JSONString is the string at path, NULL when it holds no string.
	JSONString(doc, path string) string
	// JSONStringList is the JSON array of strings doc holds, as a list;
	// empty when doc holds none.
	JSONStringList(doc string) string
	// ListLength is the number of elements of a list.
	ListLength(list string) string
	// Unnest, in a select list, repeats the row once per list element.
	Unnest(list string) string
	// JSONEntries renders a join repeating each row once per entry of
	// the JSON object doc holds, and the entry's key and value (JSON
	// text); rows whose doc holds no entries drop out.
	JSONEntries(doc string) (join, key, value string)
	// RefObjectID is the object id of a ref: its last path segment up to
	// the first ':', '' for NULL.
	RefObjectID(ref string) string
	// RefKind is the second to last path segment of a ref: the kind of
	// a ref into a project ("call", "object", ...).
	RefKind(ref string) string
}

// FeedbackStatsColumns names the columns of FeedbackStatsBuckets: the
// bucket index, the row count, then s0, s1, ... one per statistic;
// FeedbackStatsWindow has only the statistics.
func FeedbackStatsColumns(n int) []string {
	cols := []string{"bucket", "count"}
	for i := range n {
		cols = append(cols, "s"+strconv.Itoa(i))
	}
	return cols
}

// feedbackFilter renders the predicates of f over feedback_rows aliased f.
func feedbackFilter(b *builder, f storage.FeedbackFilter) []string {
	where := []string{"f.project_id = " + b.bind(f.ProjectID, TypeString),
		"f.created_at >= " + b.bind(f.Start.UTC(), TypeTime), "f.created_at < " + b.bind(f.End.UTC(), TypeTime)}
	if f.FeedbackType != nil {
		where = append(where, "f.feedback_type = "+b.bind(*f.FeedbackType, TypeString))
	}
	if f.TriggerRef != nil {
		ref := b.bind(*f.TriggerRef, TypeString)
		if f.TriggerPrefix {
			where = append(where, b.d.StartsWith("f.trigger_ref", ref))
		} else {
			where = append(where, "f.trigger_ref = "+ref)
		}
	}
	return where
}

// metricValue renders the value of m in a row's payload.
func metricValue(b *builder, d FeedbackStatsDialect, m storage.FeedbackMetric) (string, error) {
	segs := make([]querylang.Segment, len(m.Path))
	for i, k := range m.Path {
		segs[i] = querylang.Segment{Key: k}
	}
	path := b.bind(d.JSONPath(segs), TypeString)
	switch m.Type {
	case storage.FeedbackNumeric:
		return d.JSONNumber("f.payload", path), nil
	case storage.FeedbackBoolean:
		return d.JSONBool("f.payload", path), nil
	case storage.FeedbackCategorical:
		return d.JSONString("f.payload", path), nil
	}
	return "", fmt.Errorf("value type %q is not numeric, boolean or categorical: %w", m.Type, storage.ErrInvalidArgument)
}

// statAggregate renders one statistic over the column m; categorical
// values only count.
func statAggregate(d Dialect, s storage.FeedbackStat, m, typ string) (string, error) {
	ifAny := func(agg string) string { return "CASE WHEN count(" + m + ") > 0 THEN " + agg + " END" }
	numeric := typ != storage.FeedbackCategorical
	switch {
	case s.Func == storage.StatCount:
		return "count(" + m + ")", nil
	case !numeric:
	case s.Func == storage.StatSum, s.Func == storage.StatAvg, s.Func == storage.StatMin, s.Func == storage.StatMax:
		return ifAny(s.Func + "(" + m + ")"), nil
	case s.Func == storage.StatCountTrue:
		return "count(CASE WHEN " + m + " = 1 THEN 1 END)", nil
	case s.Func == storage.StatCountFalse:
		return "count(CASE WHEN " + m + " = 0 THEN 1 END)", nil
	case s.Func == storage.StatQuantile && s.Level >= 0 && s.Level <= 1:
		return ifAny(d.Quantiles(m, s.Level)[0]), nil
	}
	return "", fmt.Errorf("statistic %q does not apply to %s values: %w", s.Func, typ, storage.ErrInvalidArgument)
}

// feedbackStats renders the statistics of q over its filter, grouped by
// the bucket index when bucketed.
func feedbackStats(d FeedbackStatsDialect, q storage.FeedbackStatsQuery, bucketed bool) (Statement, error) {
	b := newBuilder(d)
	where := feedbackFilter(b, q.FeedbackFilter)
	inner := make([]string, 0, len(q.Metrics)+1)
	if bucketed {
		if q.BucketSeconds <= 0 {
			return Statement{}, fmt.Errorf("bucket width must be positive, got %d: %w", q.BucketSeconds, storage.ErrInvalidArgument)
		}
		if n := FeedbackStatsBucketCount(q); n > storage.MaxFeedbackStatsBuckets {
			return Statement{}, fmt.Errorf("the range spans %d buckets, at most %d fit: %w", n, storage.MaxFeedbackStatsBuckets, storage.ErrInvalidArgument)
		}
		origin, width := b.bind(q.Origin.UnixMilli(), TypeInt), b.bind(q.BucketSeconds*1000, TypeInt)
		inner = append(inner, "CAST(floor(("+d.EpochMillis("f.created_at")+" - "+origin+") / "+width+") AS BIGINT) AS bucket")
	}
	for i, m := range q.Metrics {
		v, err := metricValue(b, d, m)
		if err != nil {
			return Statement{}, err
		}
		inner = append(inner, v+" AS m"+strconv.Itoa(i))
	}
	if len(inner) == 0 {
		inner = append(inner, "1 AS one")
	}
	var outer []string
	if bucketed {
		outer = append(outer, "bucket", "count(*) AS count")
	}
	for i, s := range q.Stats {
		if s.Metric < 0 || s.Metric >= len(q.Metrics) {
			return Statement{}, fmt.Errorf("statistic %d names metric %d of %d: %w", i, s.Metric, len(q.Metrics), storage.ErrInvalidArgument)
		}
		agg, err := statAggregate(d, s, "m"+strconv.Itoa(s.Metric), q.Metrics[s.Metric].Type)
		if err != nil {
			return Statement{}, err
		}
		outer = append(outer, agg+" AS s"+strconv.Itoa(i))
	}
	if len(outer) == 0 {
		outer = append(outer, "count(*) AS count")
	}
	sql := "SELECT " + sqlList(outer) + " FROM (SELECT " + sqlList(inner) + " FROM feedback_rows f WHERE " + andAll(where) + ") AS _r"
	if bucketed {
		sql += " GROUP BY bucket ORDER BY bucket"
	}
	return Statement{SQL: sql, Args: b.args}, nil
}

// FeedbackStatsBucketCount is the number of buckets from q's origin that
// cover its range.
func FeedbackStatsBucketCount(q storage.FeedbackStatsQuery) int64 {
	if q.BucketSeconds <= 0 || !q.End.After(q.Origin) {
		return 0
	}
	span := q.End.UnixMilli() - q.Origin.UnixMilli()
	w := q.BucketSeconds * 1000
	return (span + w - 1) / w
}

// FeedbackStatsBuckets renders the per-bucket row count and statistics
// of q, one row of FeedbackStatsColumns(len(q.Stats)) per bucket with
// rows, in bucket order.
func FeedbackStatsBuckets(d FeedbackStatsDialect, q storage.FeedbackStatsQuery) (Statement, error) {
	return feedbackStats(d, q, true)
}

// FeedbackStatsWindow renders q's statistics over its whole range: one
// row of s0, s1, ...
func FeedbackStatsWindow(d FeedbackStatsDialect, q storage.FeedbackStatsQuery) (Statement, error) {
	return feedbackStats(d, q, false)
}

// FeedbackSamples renders the newest payload of each distinct
// trigger_ref among f's rows, newest first, at most limit rows of one
// column, payload.
func FeedbackSamples(d Dialect, f storage.FeedbackFilter, limit int) (Statement, error) {
	if limit < 1 || limit > storage.MaxFeedbackSamples {
		return Statement{}, fmt.Errorf("sample limit must be between 1 and %d, got %d: %w", storage.MaxFeedbackSamples, limit, storage.ErrInvalidArgument)
	}
	b := newBuilder(d)
	where := feedbackFilter(b, f)
	sql := "SELECT " + d.ArgMax("f.payload", "f.created_at") + " AS payload FROM feedback_rows f WHERE " + andAll(where) +
		" GROUP BY f.trigger_ref ORDER BY max(f.created_at) DESC LIMIT " + strconv.Itoa(limit)
	return Statement{SQL: sql, Args: b.args}, nil
}
