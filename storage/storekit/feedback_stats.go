package storekit

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// RowRunner runs a statement and hands use each row's values in column
// order, NULL as nil.
type RowRunner func(ctx context.Context, st sqlgen.Statement, use func(vals []any) error) error

// FeedbackStats answers storage.FeedbackAnalyzer.FeedbackStats with two
// statements in d's dialect: one per bucket, one over the window.
func FeedbackStats(ctx context.Context, d sqlgen.FeedbackStatsDialect, run RowRunner, q storage.FeedbackStatsQuery) (storage.FeedbackStatsResult, error) {
	var out storage.FeedbackStatsResult
	st, err := sqlgen.FeedbackStatsBuckets(d, q)
	if err != nil {
		return out, err
	}
	err = run(ctx, st, func(vals []any) error {
		b := storage.FeedbackStatsBucket{Index: intValue(vals[0]), Count: intValue(vals[1]), Values: make([]*float64, len(q.Stats))}
		for i := range q.Stats {
			b.Values[i] = floatValue(vals[2+i])
		}
		out.Buckets = append(out.Buckets, b)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("feedback stats: %w", err)
	}
	if st, err = sqlgen.FeedbackStatsWindow(d, q); err != nil {
		return out, err
	}
	out.Window = make([]*float64, len(q.Stats))
	err = run(ctx, st, func(vals []any) error {
		for i := range q.Stats {
			out.Window[i] = floatValue(vals[i])
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("feedback window stats: %w", err)
	}
	return out, nil
}

// AggregateFeedback answers storage.FeedbackAnalyzer.AggregateFeedback
// with three statements in d's dialect (counts, tags, ratings), joined
// on the group keys.
func AggregateFeedback(ctx context.Context, d sqlgen.FeedbackStatsDialect, run RowRunner, q storage.FeedbackAggregateQuery) ([]storage.FeedbackAggregateGroup, error) {
	nkeys := len(sqlgen.FeedbackAggregateKeys(q))
	var groups []storage.FeedbackAggregateGroup
	index := map[string]int{}
	key := func(vals []any) string {
		parts := make([]string, nkeys)
		for i := range nkeys {
			parts[i] = textValue(vals[i])
		}
		return strings.Join(parts, "\x00")
	}
	st, err := sqlgen.FeedbackAggregateCounts(d, q)
	if err != nil {
		return nil, err
	}
	err = run(ctx, st, func(vals []any) error {
		g := storage.FeedbackAggregateGroup{TotalCount: intValue(vals[nkeys]), ScoredCount: intValue(vals[nkeys+1]),
			TagCounts: map[string]int64{}, RatingCounts: map[string]int64{}, RatingSums: map[string]float64{}}
		rest := vals[:nkeys]
		if q.BucketSeconds > 0 {
			t := time.UnixMilli(intValue(vals[0])).UTC()
			g.BucketStart, rest = &t, vals[1:nkeys]
		}
		for _, v := range rest {
			g.Group = append(g.Group, textValue(v))
		}
		index[key(vals)] = len(groups)
		groups = append(groups, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("feedback aggregate: %w", err)
	}
	if st, err = sqlgen.FeedbackAggregateTags(d, q); err != nil {
		return nil, err
	}
	err = run(ctx, st, func(vals []any) error {
		if i, ok := index[key(vals)]; ok {
			groups[i].TagCounts[textValue(vals[nkeys])] += intValue(vals[nkeys+1])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("feedback aggregate tags: %w", err)
	}
	if st, err = sqlgen.FeedbackAggregateRatings(d, q); err != nil {
		return nil, err
	}
	err = run(ctx, st, func(vals []any) error {
		if i, ok := index[key(vals)]; ok {
			name := textValue(vals[nkeys])
			groups[i].RatingCounts[name] += intValue(vals[nkeys+1])
			if sum := floatValue(vals[nkeys+2]); sum != nil {
				groups[i].RatingSums[name] += *sum
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("feedback aggregate ratings: %w", err)
	}
	return groups, nil
}

// SampleFeedbackPayloads answers
// storage.FeedbackAnalyzer.SampleFeedbackPayloads with one statement.
func SampleFeedbackPayloads(ctx context.Context, d sqlgen.Dialect, run RowRunner, f storage.FeedbackFilter, limit int) ([]json.RawMessage, error) {
	st, err := sqlgen.FeedbackSamples(d, f, limit)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	err = run(ctx, st, func(vals []any) error {
		if s := textValue(vals[0]); s != "" {
			out = append(out, json.RawMessage(s))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sample feedback payloads: %w", err)
	}
	return out, nil
}

// intValue is an integer column's value; 0 for NULL.
func intValue(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case uint64:
		return int64(n)
	case uint32:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// floatValue is a numeric column's value; nil for NULL and NaN (which
// ClickHouse gives for quantiles of no values).
func floatValue(v any) *float64 {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int64, int32, uint64, uint32:
		f = float64(intValue(n))
	default:
		return nil
	}
	if math.IsNaN(f) {
		return nil
	}
	return &f
}

// textValue is a column's value as text, empty for NULL.
func textValue(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case string:
		return s
	case []byte:
		return string(s)
	case int64:
		return strconv.FormatInt(s, 10)
	}
	return fmt.Sprint(v)
}
