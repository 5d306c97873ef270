package sqlgen

import "strings"

// EpochMicros implements Dialect.
func (DuckDB) EpochMicros(ts string) string { return "epoch_us(" + ts + ")" }

// duckUsageShape is the json_transform structure of summary.usage: a map
// from model to its counts, read as text so that a count given as a
// string still parses as UsageCount's number. The document is parsed
// once; a usage that is no object reads as NULL, an entry that is none
// as NULL counts, and of a model given twice the last entry counts, as
// include_costs reads it.
var duckUsageShape = `'{"usage": "MAP(VARCHAR, STRUCT(` + strings.Join(usageKeys, " VARCHAR, ") + ` VARCHAR))"}'`

// UsageSum implements Dialect with list functions over the entries of
// the usage map: list_sum of no entries is NULL. Each entry looks its
// span up once, in duckSpan.
func (DuckDB) UsageSum(doc, at string, spans *PriceSpans, term func(entry string, price SpanPrice) string) string {
	entries := DuckDB{}.UsageEntries(doc)
	if spans == nil {
		return "list_sum(list_transform(" + entries + ", lambda _e: coalesce(" + term("_e.value", zeroPrice) + ", 0)))"
	}
	price := SpanPrice{Prompt: spans.Prompt + "[_s]", Completion: spans.Completion + "[_s]",
		CacheRead: spans.CacheRead + "[_s]", CacheCreate: spans.CacheCreate + "[_s]"}
	return "list_sum(list_transform(" + entries + ", lambda _e: list_transform([" + duckSpan("_e.key", at, spans) +
		"], lambda _s: coalesce(" + term("_e.value", price) + ", 0))[1]))"
}

// duckSpan is the index of the span of model that holds at, NULL when
// none does: list_position finds the model's first span, which most
// calls fall in; only past it are the model's later spans scanned.
func duckSpan(model, at string, spans *PriceSpans) string {
	holds := func(i string) string {
		return spans.From + "[" + i + "] <= " + at + " AND " + at + " < " + spans.To + "[" + i + "]"
	}
	return "list_transform([list_position(" + spans.Models + ", " + model + ")], lambda _f: CASE WHEN " + holds("_f") +
		" THEN _f ELSE list_filter(range(_f + 1, " + spans.Last + "[_f] + 1), lambda _i: " + holds("_i") + ")[1] END)[1]"
}

// UsageCount implements Dialect on the typed entry: key is one of
// usageKeys, a field of duckUsageShape. A count of 2^53 or more (as
// pricing reads counts) is none: sums of counts must fit the BIGINT they
// are reported as, and one call's absurd count must not fail the sums of
// a whole project.
func (DuckDB) UsageCount(entry, key string, _ func() string) string {
	n := "TRY_CAST(" + entry + "." + key + " AS DOUBLE)"
	return "(CASE WHEN abs(" + n + ") < " + maxUsageCount + " THEN " + n + " END)"
}

// maxUsageCount bounds a usage count, as pricing's number does.
const maxUsageCount = "9007199254740992"

// UsageOne implements TypedUsageDialect: the calls table's usage_*
// columns (storage/duckdb/migrations/0011_calls_usage.sql).
func (DuckDB) UsageOne(model, at string, spans *PriceSpans, term func(price SpanPrice) string) string {
	if spans == nil {
		return "coalesce(" + term(zeroPrice) + ", 0)"
	}
	price := SpanPrice{Prompt: spans.Prompt + "[_s]", Completion: spans.Completion + "[_s]",
		CacheRead: spans.CacheRead + "[_s]", CacheCreate: spans.CacheCreate + "[_s]"}
	return "list_transform([" + duckSpan(model, at, spans) + "], lambda _s: coalesce(" + term(price) + ", 0))[1]"
}

// UsageEntries implements TypedUsageDialect.
func (DuckDB) UsageEntries(doc string) string {
	return "map_entries(json_transform(" + doc + ", " + duckUsageShape + ").usage)"
}
