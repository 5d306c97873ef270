package sqlgen

import (
	"strconv"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// AggregateColumns is the select list of AggregateBuckets, in the order
// of storage.CallsBucket's fields; bucket is the bucket's index from the
// buckets' origin. The query's extra quantiles follow, named by
// QuantileColumn.
var AggregateColumns = []string{"bucket", "call_count", "error_count", "latency_p50", "latency_p95", "latency_p99",
	"latency_count", "latency_sum", "latency_min", "latency_max"}

// QuantileColumn names the column of the query's i-th extra quantile.
func QuantileColumn(i int) string { return "latency_q" + strconv.Itoa(i) }

// UsageColumns is the select list of AggregateUsage: the bucket, the
// model and the sums of storage.ModelUsageBucket, Entries last.
var UsageColumns = []string{"bucket", "model", "requests", "prompt_tokens", "completion_tokens", "total_tokens",
	"cache_read_tokens", "cache_creation_tokens", "entries"}

// aggregatePlan is a calls filter restricted to the aggregate's range,
// with the bucket index expression.
type aggregatePlan struct {
	*callsPlan
	bucket string
}

func planAggregate(d Dialect, q storage.CallsAggregateQuery) (*aggregatePlan, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	p, err := planCalls(d, q.Calls, false, nil)
	if err != nil {
		return nil, err
	}
	p.where = append(p.where, "c.started_at >= "+p.b.bind(q.Start.UTC(), TypeTime),
		"c.started_at < "+p.b.bind(q.End.UTC(), TypeTime))
	origin := p.b.bind(q.BucketOrigin().UnixMilli(), TypeInt)
	width := p.b.bind(q.BucketSeconds*1000, TypeInt)
	bucket := "CAST(floor((" + d.EpochMillis("c.started_at") + " - " + origin + ") / " + width + ") AS BIGINT)"
	return &aggregatePlan{callsPlan: p, bucket: bucket}, nil
}

// AggregateBuckets renders the per-bucket call count, error count and
// latency figures of q, one row of AggregateColumns (then q's extra
// quantiles) per bucket that has calls, in bucket order.
func AggregateBuckets(d Dialect, q storage.CallsAggregateQuery) (Statement, error) {
	p, err := planAggregate(d, q)
	if err != nil {
		return Statement{}, err
	}
	latency := d.MillisBetween("c.started_at", "c.ended_at")
	lq := d.Quantiles(latency, append([]float64{0.5, 0.95, 0.99}, q.Quantiles...)...)
	extra := ""
	for i, e := range lq[3:] {
		extra += ", " + e + " AS " + QuantileColumn(i)
	}
	sql := p.withClause() + "SELECT " + p.bucket + " AS bucket, count(*) AS call_count, " +
		d.SumInt("CASE WHEN c.exception IS NOT NULL THEN 1 ELSE 0 END") + " AS error_count, " +
		lq[0] + " AS latency_p50, " + lq[1] + " AS latency_p95, " + lq[2] + " AS latency_p99, count(" + latency + ") AS latency_count, " +
		"coalesce(sum(" + latency + "), 0) AS latency_sum, min(" + latency + ") AS latency_min, max(" + latency + ") AS latency_max" + extra +
		" FROM " + p.from() + " WHERE " + andAll(p.where) + " GROUP BY bucket ORDER BY bucket"
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// AggregateUsage renders the per-bucket, per-model sums of the matching
// calls' summary.usage entries, one row of UsageColumns each, in bucket
// then model order. Counts that are no numbers count as 0.
func AggregateUsage(d Dialect, q storage.CallsAggregateQuery) (Statement, error) {
	p, err := planAggregate(d, q)
	if err != nil {
		return Statement{}, err
	}
	if td, ok := d.(TypedUsageDialect); ok {
		return typedAggregateUsage(td, p), nil
	}
	join, model, value := d.ObjectEntries("c.summary", "usage")
	count := func(names ...string) string {
		var terms []string
		for _, n := range names {
			path := p.b.bind(d.JSONPath([]querylang.Segment{{Key: n}}), TypeString)
			terms = append(terms, "coalesce("+d.ParseFloat(d.JSONValue(value, path))+", 0)")
		}
		return d.SumInt(strings.Join(terms, " + "))
	}
	sql := p.withClause() + "SELECT " + p.bucket + " AS bucket, " + model + " AS model, " +
		count("requests") + " AS requests, " + count("prompt_tokens", "input_tokens") + " AS prompt_tokens, " +
		count("completion_tokens", "output_tokens") + " AS completion_tokens, " +
		count("total_tokens") + " AS total_tokens, " + count("cache_read_input_tokens") + " AS cache_read_tokens, " +
		count("cache_creation_input_tokens") + " AS cache_creation_tokens, count(*) AS entries FROM " + p.from() + join + " WHERE " + andAll(p.where) +
		" GROUP BY bucket, model ORDER BY bucket, model"
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// typedAggregateUsage sums the typed usage columns of the calls with one
// model, and the parsed summaries of the calls whose usage is not typed
// (more models, or rows written before the columns), per bucket.
func typedAggregateUsage(d TypedUsageDialect, p *aggregatePlan) Statement {
	sql := p.withClause() + usageSums(d, p.bucket+" AS bucket", []string{"bucket"}, p.from(), andAll(p.where)) +
		" ORDER BY bucket, model"
	return Statement{SQL: sql, Args: p.b.args}
}

// usageSums renders the usage sums per group and model of the calls from
// where selects: the typed columns of the calls with one model, the
// parsed summaries of the rest. keys is the select list of the group's
// columns (over the calls aliased c), names their names. A model given
// twice in one summary counts once, with its last entry, as costs read
// it. The sums are held at BIGINT's bounds (a sum of counts each under
// 2^53 can still pass them) rather than failing a project's charts, and
// are 0 where no call gave a count.
func usageSums(d TypedUsageDialect, keys string, names []string, from, where string) string {
	group := strings.Join(names, ", ")
	typed := "SELECT " + keys + ", c.usage_model AS model, c.usage_requests AS requests, c.usage_prompt AS prompt, " +
		"c.usage_completion AS completion, c.usage_total AS total, c.usage_cache_read AS cache_read, " +
		"c.usage_cache_create AS cache_create FROM " + from + " WHERE " + where + " AND c.usage_models = 1"
	entries := "SELECT " + keys + ", unnest(" + d.UsageEntries("c.summary") + ") AS _e FROM " + from +
		" WHERE " + where + " AND (c.usage_models IS NULL OR c.usage_models > 1)"
	count := func(keys ...string) string {
		terms := make([]string, len(keys))
		for i, k := range keys {
			terms[i] = "coalesce(" + d.UsageCount("_e.value", k, nil) + ", 0)"
		}
		return strings.Join(terms, " + ")
	}
	parsed := "SELECT " + group + ", _e.key, " + count("requests") + ", " + count("prompt_tokens", "input_tokens") + ", " +
		count("completion_tokens", "output_tokens") + ", " + count("total_tokens") + ", " + count("cache_read_input_tokens") + ", " +
		count("cache_creation_input_tokens") + " FROM (" + entries + ")"
	sum := func(col string) string {
		return "coalesce(CAST(greatest(least(sum(" + col + "), 9.2e18), -9.2e18) AS BIGINT), 0)"
	}
	return "SELECT " + group + ", model, " + sum("requests") + " AS requests, " + sum("prompt") + " AS prompt_tokens, " +
		sum("completion") + " AS completion_tokens, " + sum("total") + " AS total_tokens, " + sum("cache_read") + " AS cache_read_tokens, " +
		sum("cache_create") + " AS cache_creation_tokens, count(*) AS entries FROM (" + typed + " UNION ALL " + parsed +
		") GROUP BY " + group + ", model"
}
