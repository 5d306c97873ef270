package sqlgen

import (
	"time"

	"github.com/weftdev/weft/storage/latencyhist"
)

// A project's calls summed per minute of their start, per op and per
// whether they are trace roots: what the DuckDB store keeps as chart
// rollups (storage/duckdb/minutes.go) and what it computes afresh for the
// minutes whose rollups are out of date. The statements below return the
// same rows for both, so a chart reads the same whichever it was.

// MinuteExpr is the minute of a start time: whole minutes since the
// epoch, floored.
func MinuteExpr(started string) string {
	return "(epoch_ms(date_trunc('minute', " + started + ")) // 60000)"
}

// MinuteFilter is the part of a calls filter that rollups keep apart:
// op names (exact or ":*" wildcards) and roots only.
type MinuteFilter struct {
	OpNames   []string
	RootsOnly bool
}

// MinuteSource selects a project's calls by the minutes they started in:
// those in Ranges (half-open, whole minutes), and when Minutes is not nil
// only those of its minutes.
type MinuteSource struct {
	ProjectID string
	Ranges    []TimeRange
	Minutes   []int64
	Filter    MinuteFilter
}

// MinuteCountColumns is the select list of MinuteCounts.
var MinuteCountColumns = []string{"minute", "op_name", "is_root", "calls", "errors"}

// MinuteBinColumns is the select list of MinuteBins.
var MinuteBinColumns = []string{"minute", "op_name", "is_root", "bin", "n", "total"}

// MinuteUsageColumns is the select list of MinuteUsage.
var MinuteUsageColumns = []string{"minute", "op_name", "is_root", "model", "requests", "prompt_tokens", "completion_tokens", "total_tokens",
	"cache_read_tokens", "cache_creation_tokens", "entries"}

// minutePlan is a MinuteSource rendered: its FROM and WHERE.
type minutePlan struct {
	b     *builder
	from  string
	where []string
}

// callColumns are the calls columns the minute statements read.
const minuteCallColumns = "project_id, op_name, parent_id, has_start, deleted_at, started_at, exception, latency_ms, " +
	"usage_models, usage_model, usage_requests, usage_prompt, usage_completion, usage_total, usage_cache_read, usage_cache_create, summary"

func planMinutes(d Dialect, src MinuteSource) *minutePlan {
	b := newBuilder(d)
	ranges := make([]TimeRange, len(src.Ranges))
	for i, r := range src.Ranges {
		// BETWEEN is inclusive; start times are kept to the microsecond.
		ranges[i] = TimeRange{From: r.From.UTC(), To: r.To.UTC().Add(-time.Microsecond)}
	}
	p := &minutePlan{b: b}
	p.from = RangeScans("calls", minuteCallColumns, ranges, func(t time.Time) string { return b.bind(t, TypeTime) }) + " c"
	p.where = []string{"c.project_id = " + b.bind(src.ProjectID, TypeString), "c.has_start", "c.deleted_at IS NULL"}
	if src.Minutes != nil {
		p.where = append(p.where, MinuteExpr("c.started_at")+" IN (SELECT unnest("+b.bind(src.Minutes, TypeIntList)+"))")
	}
	p.where = append(p.where, src.Filter.predicates(b, "c.op_name", isRoot("c"))...)
	return p
}

// predicates renders f over the op name column op and the root test root.
func (f MinuteFilter) predicates(b *builder, op, root string) []string {
	var preds []string
	if pred := opNamePredicate(b, op, f.OpNames); pred != "" {
		preds = append(preds, pred)
	}
	if f.RootsOnly {
		preds = append(preds, root)
	}
	return preds
}

// keys is the grouping every minute statement shares.
func (p *minutePlan) keys() string {
	return MinuteExpr("c.started_at") + " AS minute, c.op_name AS op_name, " + isRoot("c") + " AS is_root"
}

// MinuteCounts renders the calls and errors (calls with an exception) per
// minute, op and root flag of src, one row of MinuteCountColumns each.
func MinuteCounts(d Dialect, src MinuteSource) Statement {
	p := planMinutes(d, src)
	sql := "SELECT " + p.keys() + ", count(*) AS calls, " + d.SumInt("CASE WHEN c.exception IS NOT NULL THEN 1 ELSE 0 END") +
		" AS errors FROM " + p.from + " WHERE " + andAll(p.where) + " GROUP BY ALL"
	return Statement{SQL: sql, Args: p.b.args}
}

// MinuteBins renders the latency histogram (latencyhist) of the ended
// calls per minute, op and root flag of src: one row of MinuteBinColumns
// per non-empty bin.
func MinuteBins(d StoredLatencyDialect, src MinuteSource) Statement {
	p := planMinutes(d, src)
	lat := "c." + d.LatencyColumn()
	sql := "SELECT " + p.keys() + ", " + latencyhist.BinSQL(lat) + " AS bin, count(*) AS n, " + d.SumInt(lat) + " AS total FROM " +
		p.from + " WHERE " + andAll(append(p.where, lat+" IS NOT NULL")) + " GROUP BY ALL"
	return Statement{SQL: sql, Args: p.b.args}
}

// MinuteUsage renders, per minute, op, root flag and model of src, the
// sums of the calls' summary.usage entries as AggregateUsage counts them:
// one row of MinuteUsageColumns each.
func MinuteUsage(d TypedUsageDialect, src MinuteSource) Statement {
	p := planMinutes(d, src)
	sql := usageSums(d, p.keys(), []string{"minute", "op_name", "is_root"}, p.from, andAll(p.where))
	return Statement{SQL: sql, Args: p.b.args}
}

// StoredMinutes renders the rollup rows of table (call_minutes or
// call_minute_usage, aliased m) of a project's clean minutes within
// [from, to) that f selects, with the select list cols. A dirty minute's
// rows are left out: a read computes that minute from the calls.
func StoredMinutes(d Dialect, table, cols, projectID string, from, to int64, f MinuteFilter) Statement {
	b := newBuilder(d)
	project := b.bind(projectID, TypeString)
	where := append([]string{"m.project_id = " + project, "m.minute >= " + b.bind(from, TypeInt), "m.minute < " + b.bind(to, TypeInt),
		"m.minute NOT IN (SELECT minute FROM call_minutes_dirty WHERE project_id = " + project + ")"},
		f.predicates(b, "m.op_name", "m.is_root")...)
	return Statement{SQL: "SELECT " + cols + " FROM " + table + " m WHERE " + andAll(where), Args: b.args}
}

// TimelessCount renders the count of a project's calls that f selects
// that have a start but no start time, which no minute holds. Zone maps
// keep whether a block has NULLs, so the scan skips every block of calls
// with start times.
func TimelessCount(d Dialect, projectID string, f MinuteFilter) Statement {
	b := newBuilder(d)
	where := append([]string{"c.project_id = " + b.bind(projectID, TypeString), "c.has_start", "c.deleted_at IS NULL", "c.started_at IS NULL"},
		f.predicates(b, "c.op_name", isRoot("c"))...)
	return Statement{SQL: "SELECT count(*) FROM calls c WHERE " + andAll(where), Args: b.args}
}
