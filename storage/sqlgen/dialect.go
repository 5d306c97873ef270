package sqlgen

import "github.com/weftdev/weft/storage/querylang"

// Type is the SQL type of a bound parameter or a compiled expression.
type Type int

// The types the compiler distinguishes. Comparisons only match within a
// group: numbers (int, float, bool), strings, times.
const (
	TypeString Type = iota + 1
	TypeInt
	TypeFloat
	TypeBool
	TypeTime
	TypeStringList
	TypeIntList
	TypeFloatList
	// typeNull is the type of a null literal; it is never bound.
	typeNull
)

// Dialect renders the SQL that differs between engines. Arguments are SQL
// fragments; the dialect never sees user values, only the placeholders
// they are bound to. What is left to sqlgen is SQL both engines share:
// CTEs, LEFT JOIN, CASE, IN, coalesce, NULLIF, count, min, max, row
// tuples, NULLS LAST.
type Dialect interface {
	// Param renders the n-th (1-based) bound argument, typed as t.
	Param(n int, t Type) string
	// PageKey selects a key of the row of alias that the second, heavy
	// phase of a paged query joins on.
	PageKey(alias string) string
	// ReadCurrent renders a FROM item reading table under alias. Engines
	// that keep several versions of a row read only the current one.
	ReadCurrent(table, alias string) string
	// PageJoin renders the FROM clause of the heavy phase: the rows of
	// table, aliased alias and scoped to the project placeholder, whose
	// PageKey is a _k of the CTE page, joined with page.
	PageJoin(page, table, alias, project string) string

	// JSONText renders a JSON column as its text, for scanning.
	JSONText(col string) string
	// RawSpanText renders the otel_dump column of the row aliased alias
	// for the store's reader to decode; an engine whose stored form refers
	// to other columns of the row folds them in.
	RawSpanText(alias string) string
	// JSONPath encodes a field path into the value bound for the path
	// argument of JSONValue and JSONExists. An empty path is the document.
	JSONPath(segs []querylang.Segment) string
	// JSONValue is the value at path as a string: strings unquoted,
	// integral numbers without a fraction ("5.0" is "5"), booleans
	// "true"/"false", objects and arrays as minified JSON, and '' when the
	// path is missing or holds null. Never NULL for a non-NULL doc.
	JSONValue(doc, path string) string
	// JSONExists is true when path exists in doc and is not JSON null.
	JSONExists(doc, path string) string
	// TextLength is the length in bytes of a text or JSON expression.
	TextLength(expr string) string

	// ParseInt parses a string holding an optionally signed integer
	// (surrounding spaces allowed), else NULL.
	ParseInt(s string) string
	// ParseFloat parses a string holding a number, else NULL.
	ParseFloat(s string) string
	// ParseBool maps 'true' to 1, 'false' to 0, integers 0..255 to
	// themselves, anything else to NULL (an integer expression).
	ParseBool(s string) string
	// ToText renders an expression of type t as a string: integral floats
	// without a fraction, booleans as 'true'/'false'.
	ToText(expr string, t Type) string

	// Contains tests for a substring; NULL operands give NULL.
	Contains(hay, needle string, caseInsensitive bool) string
	// HasToken tests whether needle is one of the tokens of hay, tokens
	// being the runs between characters other than ASCII letters, digits
	// and non-ASCII characters.
	HasToken(hay, needle string, caseInsensitive bool) string
	// StartsWith tests a string prefix.
	StartsWith(s, prefix string) string
	// StripPrefix removes a prefix known to be present.
	StripPrefix(s, prefix string) string
	// StoredList renders a string list column as a list: how the backend
	// keeps it may differ (DuckDB keeps refs as JSON text).
	StoredList(col string) string
	// ListHasAny tests whether a string list column holds any of elems.
	ListHasAny(list string, elems []string) string
	// ListHasPrefix tests whether any element of a string list starts with
	// prefix.
	ListHasPrefix(list, prefix string) string
	// OpShortName extracts <name> from an op ref ".../op/<name>:<digest>";
	// '' when the last path segment has no ':'.
	OpShortName(opName string) string

	// EpochMillis is a time as whole milliseconds since the Unix epoch.
	EpochMillis(ts string) string
	// SumInt is the sum aggregate of an integer expression, as a 64-bit
	// integer.
	SumInt(expr string) string
	// MillisBetween is end - start in (fractional) milliseconds.
	MillisBetween(start, end string) string
	// Quantiles are the linearly interpolated quantiles of expr at levels,
	// one expression each, computed by one aggregate: each level as its own
	// aggregate kept and sorted the values once per level.
	Quantiles(expr string, levels ...float64) []string
	// ArgMin and ArgMax are aggregates returning arg at the smallest or
	// largest key, ignoring rows whose key is NULL.
	ArgMin(arg, key string) string
	ArgMax(arg, key string) string
	// FirstBy is an aggregate returning the first value in orderBy order
	// among the rows where filter holds ("" for no filter).
	FirstBy(value, orderBy, filter string) string
	// ObjectEntries renders a join that repeats each row once per entry
	// of the JSON object at the top-level key of doc (key is a constant,
	// never user input), and the entry's key and value (JSON text).
	// Rows whose doc holds no such object have no entries.
	ObjectEntries(doc, key string) (join, entryKey, entryValue string)

	// EpochMicros is a time as whole microseconds since the Unix epoch.
	EpochMicros(ts string) string
	// UsageSum is the sum of term over the entries of the JSON object
	// summary.usage of the summary doc, NULL when it has no entries. term
	// gets an entry, to read with UsageCount, and, with spans, the costs
	// of the span of the entry's model that holds at (epoch microseconds);
	// for a model without one they are 0 or NULL, and a term that is NULL
	// counts as 0. Without spans every cost is 0.
	UsageSum(doc, at string, spans *PriceSpans, term func(entry string, price SpanPrice) string) string
	// UsageCount is the number an entry of UsageSum holds under key (one
	// of usageKeys), NULL when it holds none. path binds the JSON path of
	// key, for a dialect that reads the entry as JSON text.
	UsageCount(entry, key string, path func() string) string
}

// PriceSpans are the placeholders of a price schedule bound as parallel
// arrays: the model, the start and end of its span (epoch microseconds,
// end exclusive) and the four per-token costs. A model's spans are
// neighbours, sorted by start; Last holds, for each span, the 1-based
// index of its model's last span.
type PriceSpans struct {
	Models, From, To, Last                     string
	Prompt, Completion, CacheRead, CacheCreate string
}

// SpanPrice is the per-token costs of one usage entry, as SQL.
type SpanPrice struct {
	Prompt, Completion, CacheRead, CacheCreate string
}

// zeroPrice prices nothing.
var zeroPrice = SpanPrice{Prompt: "0", Completion: "0", CacheRead: "0", CacheCreate: "0"}

// TypedUsageDialect is a Dialect whose calls table keeps summary.usage
// typed beside the summary (summaryUsage in storage/duckdb): usage_models, and for
// a call with one model usage_model and its counts. Token totals, costs
// and usage sums then read those columns and parse the summary only for
// the rows whose usage_models is neither 0 nor 1.
// StoredLatencyDialect is a Dialect whose calls table keeps each call's
// summary.weave.latency_ms in a column, written with its start and end
// (ended_at - started_at in whole milliseconds, NULL until both are
// known). Sorting and filtering on the column let the engine skip rows
// by it; SortBound pages on it.
type StoredLatencyDialect interface {
	Dialect
	// LatencyColumn names the column.
	LatencyColumn() string
}

// StoredTokensDialect is a Dialect whose calls table keeps each call's
// summary.weave.total_tokens in a column, written with its end (the sum
// TotalTokensSQL renders, NULL without usage). Sorting and filtering on
// the column let the engine skip rows by it; SortBound pages on it.
type StoredTokensDialect interface {
	Dialect
	// TokensColumn names the column.
	TokensColumn() string
}

type TypedUsageDialect interface {
	Dialect
	// UsageOne is term over the one typed entry of model, with the costs
	// of the span of model that holds at (as UsageSum gives them), 0 when
	// term is NULL.
	UsageOne(model, at string, spans *PriceSpans, term func(price SpanPrice) string) string
	// UsageEntries is the list of a summary's usage entries (key: the
	// model, value: an entry to read with UsageCount), a model given
	// twice once; NULL when the summary has no usage object.
	UsageEntries(doc string) string
}
