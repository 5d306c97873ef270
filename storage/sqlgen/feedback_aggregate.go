package sqlgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// FeedbackAggregateKeys names the group key columns of the feedback
// aggregate statements: bucket (its start in epoch milliseconds) when q
// is bucketed, then g0, g1, ... one per GroupBy dimension.
func FeedbackAggregateKeys(q storage.FeedbackAggregateQuery) []string {
	var keys []string
	if q.BucketSeconds > 0 {
		keys = append(keys, "bucket")
	}
	for i := range q.GroupBy {
		keys = append(keys, "g"+strconv.Itoa(i))
	}
	return keys
}

// aggregatePlanFB is the key expressions and predicates shared by the
// feedback aggregate statements, over feedback_rows aliased f.
type aggregatePlanFB struct {
	b     *builder
	keys  []string // "<expr> AS <name>"
	names []string
	where []string
}

func planFeedbackAggregate(d FeedbackStatsDialect, q storage.FeedbackAggregateQuery) (*aggregatePlanFB, error) {
	if !q.Before.After(q.After) {
		return nil, fmt.Errorf("before must be after after: %w", storage.ErrInvalidArgument)
	}
	p := &aggregatePlanFB{b: newBuilder(d), names: FeedbackAggregateKeys(q)}
	b := p.b
	if q.BucketSeconds > 0 {
		at, width := d.EpochMillis("f.created_at"), b.bind(q.BucketSeconds*1000, TypeInt)
		offset := "(" + at + " % " + width + ")"
		if q.BucketSeconds%3600 == 0 {
			// Whole hours count from the start of each (UTC) day.
			offset = "((" + at + " % 86400000) % " + width + ")"
		}
		p.keys = append(p.keys, "CAST("+at+" - "+offset+" AS BIGINT) AS bucket")
	}
	for i, dim := range q.GroupBy {
		var expr string
		switch dim {
		case "scorer_id":
			expr = d.RefObjectID("f.runnable_ref")
		case "span_agent_name", "span_agent_version", "span_status_code":
			expr = "f." + dim
		default:
			return nil, fmt.Errorf("group_by %q is not one of %v: %w", dim, storage.FeedbackAggregateDimensions, storage.ErrInvalidArgument)
		}
		p.keys = append(p.keys, expr+" AS g"+strconv.Itoa(i))
	}
	p.where = []string{"f.project_id = " + b.bind(q.ProjectID, TypeString),
		"f.created_at >= " + b.bind(q.After.UTC(), TypeTime), "f.created_at < " + b.bind(q.Before.UTC(), TypeTime)}
	anyOf := func(vals []string, pred func(string) string) {
		if len(vals) == 0 {
			return
		}
		ors := make([]string, len(vals))
		for i, v := range vals {
			ors[i] = pred(v)
		}
		p.where = append(p.where, "("+strings.Join(ors, " OR ")+")")
	}
	anyOf(q.FeedbackTypes, func(v string) string {
		return d.StartsWith("f.feedback_type", b.bind(strings.TrimRight(v, "*"), TypeString))
	})
	objectID := func(col string) func(string) string {
		return func(v string) string {
			id := d.RefObjectID(col)
			if strings.HasSuffix(v, "*") {
				return d.StartsWith(id, b.bind(strings.TrimRight(v, "*"), TypeString))
			}
			return id + " = " + b.bind(v, TypeString)
		}
	}
	anyOf(q.MonitorIDs, objectID("f.trigger_ref"))
	anyOf(q.ScorerIDs, objectID("f.runnable_ref"))
	anyOf(q.SpanAgentNames, func(v string) string { return "f.span_agent_name = " + b.bind(v, TypeString) })
	anyOf(q.SpanTypes, func(v string) string { return d.RefKind("f.weave_ref") + " = " + b.bind(v, TypeString) })
	if len(q.Tags) > 0 {
		tags := make([]string, len(q.Tags))
		for i, t := range q.Tags {
			tags[i] = b.bind(t, TypeString)
		}
		p.where = append(p.where, d.ListHasAny(d.JSONStringList("f.scorer_tags"), tags))
	}
	if q.RatingMin != nil || q.RatingMax != nil {
		path := b.bind(d.JSONPath([]querylang.Segment{{Key: "_rating_"}}), TypeString)
		rating := d.JSONNumber("f.scorer_ratings", path)
		p.where = append(p.where, rating+" IS NOT NULL")
		if q.RatingMin != nil {
			p.where = append(p.where, rating+" >= "+b.bind(*q.RatingMin, TypeFloat))
		}
		if q.RatingMax != nil {
			p.where = append(p.where, rating+" <= "+b.bind(*q.RatingMax, TypeFloat))
		}
	}
	return p, nil
}

// groupOrder renders GROUP BY and ORDER BY over the keys and extra
// columns; nothing when there are none.
func (p *aggregatePlanFB) groupOrder(extra ...string) string {
	cols := slices.Concat(p.names, extra)
	if len(cols) == 0 {
		return ""
	}
	return " GROUP BY " + sqlList(cols) + " ORDER BY " + sqlList(cols)
}

// FeedbackAggregateCounts renders the row and scored-row counts of each
// group: FeedbackAggregateKeys(q), then total_count and scored_count.
// Without keys it is one row, whatever matches.
func FeedbackAggregateCounts(d FeedbackStatsDialect, q storage.FeedbackAggregateQuery) (Statement, error) {
	p, err := planFeedbackAggregate(d, q)
	if err != nil {
		return Statement{}, err
	}
	scored := d.ListLength(d.JSONStringList("f.scorer_tags")) + " > 0 OR f.scorer_ratings NOT IN ('', '{}')"
	cols := slices.Concat(p.keys, []string{"count(*) AS total_count", "count(CASE WHEN " + scored + " THEN 1 END) AS scored_count"})
	sql := "SELECT " + sqlList(cols) + " FROM feedback_rows f WHERE " + andAll(p.where) + p.groupOrder()
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// FeedbackAggregateTags renders the count of each scorer tag per group:
// FeedbackAggregateKeys(q), then tag and n.
func FeedbackAggregateTags(d FeedbackStatsDialect, q storage.FeedbackAggregateQuery) (Statement, error) {
	p, err := planFeedbackAggregate(d, q)
	if err != nil {
		return Statement{}, err
	}
	inner := slices.Concat(p.keys, []string{d.Unnest(d.JSONStringList("f.scorer_tags")) + " AS tag"})
	sql := "SELECT " + sqlList(slices.Concat(p.names, []string{"tag", "count(*) AS n"})) +
		" FROM (SELECT " + sqlList(inner) + " FROM feedback_rows f WHERE " + andAll(p.where) + ") AS _r" + p.groupOrder("tag")
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// FeedbackAggregateRatings renders the count and sum of each numeric
// scorer rating per group: FeedbackAggregateKeys(q), then rating, n and
// total.
func FeedbackAggregateRatings(d FeedbackStatsDialect, q storage.FeedbackAggregateQuery) (Statement, error) {
	p, err := planFeedbackAggregate(d, q)
	if err != nil {
		return Statement{}, err
	}
	join, key, value := d.JSONEntries("f.scorer_ratings")
	inner := slices.Concat(p.keys, []string{key + " AS rating", d.ParseFloat(value) + " AS v"})
	sql := "SELECT " + sqlList(slices.Concat(p.names, []string{"rating", "count(v) AS n", "sum(v) AS total"})) +
		" FROM (SELECT " + sqlList(inner) + " FROM feedback_rows f" + join + " WHERE " + andAll(p.where) +
		") AS _r WHERE v IS NOT NULL" + p.groupOrder("rating")
	return Statement{SQL: sql, Args: p.b.args}, nil
}
