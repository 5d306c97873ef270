package sqlgen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weftdev/weft/storage/querylang"
)

// DuckDB is the Dialect of the embedded DuckDB backend. JSON columns hold
// text of the JSON type; paths are JSON pointers, which address object keys
// and array indexes alike. Expressions used more than once go through a
// one-element list_transform so DuckDB evaluates them once.
type DuckDB struct{}

var (
	_ Dialect              = DuckDB{}
	_ StoredLatencyDialect = DuckDB{}
	_ StoredTokensDialect  = DuckDB{}
)

// NewDuckDB returns the DuckDB dialect.
func NewDuckDB() DuckDB { return DuckDB{} }

// Param implements Dialect.
func (DuckDB) Param(n int, t Type) string {
	return fmt.Sprintf("CAST($%d AS %s)", n, duckType(t))
}

func duckType(t Type) string {
	switch t {
	case TypeInt:
		return "BIGINT"
	case TypeFloat:
		return "DOUBLE"
	case TypeBool:
		return "BOOLEAN"
	case TypeTime:
		return "TIMESTAMP"
	case TypeStringList:
		return "VARCHAR[]"
	case TypeIntList:
		return "BIGINT[]"
	case TypeFloatList:
		return "DOUBLE[]"
	}
	return "VARCHAR"
}

// PageKey implements Dialect: the physical row id, which DuckDB fetches
// directly instead of scanning the table again.
func (DuckDB) PageKey(alias string) string { return alias + ".rowid" }

// LatencyColumn implements StoredLatencyDialect (storage/duckdb's
// migrations/0012_calls_latency.sql).
func (DuckDB) LatencyColumn() string { return "latency_ms" }

// TokensColumn implements StoredTokensDialect (storage/duckdb's
// migrations/0014_calls_tokens.sql).
func (DuckDB) TokensColumn() string { return "total_tokens" }

// ReadCurrent implements Dialect: DuckDB keeps one row per call.
func (DuckDB) ReadCurrent(table, alias string) string { return table + " " + alias }

// PageJoin implements Dialect.
func (d DuckDB) PageJoin(page, table, alias, _ string) string {
	return page + " JOIN " + table + " " + alias + " ON " + d.PageKey(alias) + " = " + page + "._k"
}

// JSONText implements Dialect.
func (DuckDB) JSONText(col string) string { return "CAST(" + col + " AS VARCHAR)" }

// RawSpanText implements Dialect: a dump stored with references into the
// row's inputs and output ("r:", or "o=" when it keeps the output it
// referenced) comes back followed by them, as the store's reader expects:
// "\x03", the byte length of the inputs, ':', the inputs, the output.
func (DuckDB) RawSpanText(alias string) string {
	d, in, out := alias+".otel_dump", alias+".inputs", alias+".output"
	return "CASE WHEN starts_with(" + d + ", 'r:') OR starts_with(" + d + ", 'o=') THEN " +
		d + " || chr(3) || coalesce(strlen(" + in + "), 0) || ':' || coalesce(" + in + ", '') || coalesce(" + out + ", '') " +
		"ELSE " + d + " END"
}

// JSONPath implements Dialect with an RFC 6901 JSON pointer.
func (DuckDB) JSONPath(segs []querylang.Segment) string {
	var sb strings.Builder
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, s := range segs {
		sb.WriteByte('/')
		sb.WriteString(esc.Replace(s.Key))
	}
	return sb.String()
}

// JSONValue implements Dialect. DuckDB's JSON functions raise an error
// for a whole document they cannot parse (one holding a lone surrogate
// escape, which older versions stored): try() reads it as absent instead,
// so one such row cannot fail every query on its project.
func (d DuckDB) JSONValue(doc, path string) string {
	return "list_transform([try(json_extract(" + doc + ", " + path + "))], lambda _wv: CASE" +
		" WHEN _wv IS NULL THEN ''" +
		" WHEN json_type(_wv) = 'DOUBLE' THEN " + d.floatText("CAST(_wv AS DOUBLE)") +
		" ELSE coalesce(json_extract_string(_wv, ''), '') END)[1]"
}

// floatText renders a cheap double expression the way the reference
// server prints numbers: integral values without a fraction.
func (DuckDB) floatText(x string) string {
	return "CASE WHEN isfinite(" + x + ") AND " + x + " = trunc(" + x + ") AND abs(" + x + ") < 1e38" +
		" THEN CAST(CAST(" + x + " AS HUGEINT) AS VARCHAR) ELSE CAST(" + x + " AS VARCHAR) END"
}

// JSONExists implements Dialect; try() as in JSONValue.
func (DuckDB) JSONExists(doc, path string) string {
	return "(coalesce(try(json_type(" + doc + ", " + path + ")), 'NULL') <> 'NULL')"
}

// TextLength implements Dialect.
func (DuckDB) TextLength(expr string) string { return "strlen(CAST(" + expr + " AS VARCHAR))" }

// ParseInt implements Dialect. The pattern check keeps "1.5" from
// rounding to 2 as a plain cast would.
func (DuckDB) ParseInt(s string) string {
	return "list_transform([" + s + "], lambda _pi: CASE WHEN regexp_full_match(_pi, '\\s*[+-]?[0-9]+\\s*')" +
		" THEN TRY_CAST(trim(_pi) AS BIGINT) END)[1]"
}

// ParseFloat implements Dialect.
func (DuckDB) ParseFloat(s string) string { return "TRY_CAST(" + s + " AS DOUBLE)" }

// ParseBool implements Dialect.
func (DuckDB) ParseBool(s string) string {
	return "list_transform([" + s + "], lambda _pb: CASE WHEN _pb = 'true' THEN 1 WHEN _pb = 'false' THEN 0" +
		" WHEN regexp_full_match(_pb, '\\s*[+]?[0-9]{1,3}\\s*') AND TRY_CAST(trim(_pb) AS BIGINT) <= 255" +
		" THEN TRY_CAST(trim(_pb) AS BIGINT) END)[1]"
}

// ToText implements Dialect.
func (d DuckDB) ToText(expr string, t Type) string {
	switch t {
	case TypeString:
		return expr
	case TypeFloat:
		return "list_transform([" + expr + "], lambda _ft: " + d.floatText("_ft") + ")[1]"
	case TypeBool:
		return "CASE WHEN " + expr + " THEN 'true' WHEN NOT " + expr + " THEN 'false' END"
	}
	return "CAST(" + expr + " AS VARCHAR)"
}

// Contains implements Dialect.
func (DuckDB) Contains(hay, needle string, ci bool) string {
	if ci {
		return "contains(lower(" + hay + "), lower(" + needle + "))"
	}
	return "contains(" + hay + ", " + needle + ")"
}

// HasToken implements Dialect.
func (DuckDB) HasToken(hay, needle string, ci bool) string {
	if ci {
		hay, needle = "lower("+hay+")", "lower("+needle+")"
	}
	return "list_contains(regexp_split_to_array(" + hay + ", '[^0-9A-Za-z\\x{80}-\\x{10FFFF}]+'), " + needle + ")"
}

// StartsWith implements Dialect.
func (DuckDB) StartsWith(s, prefix string) string { return "starts_with(" + s + ", " + prefix + ")" }

// StripPrefix implements Dialect.
func (DuckDB) StripPrefix(s, prefix string) string {
	return "substr(" + s + ", length(" + prefix + ") + 1)"
}

// StoredList implements Dialect: the calls table keeps refs as a JSON
// array, NULL for none, which reads as an empty list.
func (DuckDB) StoredList(col string) string {
	return "coalesce(from_json(" + col + ", '[\"VARCHAR\"]'), [])"
}

// ListHasAny implements Dialect.
func (DuckDB) ListHasAny(list string, elems []string) string {
	return "list_has_any(" + list + ", [" + strings.Join(elems, ", ") + "])"
}

// ListHasPrefix implements Dialect.
func (DuckDB) ListHasPrefix(list, prefix string) string {
	return "coalesce(list_bool_or(list_transform(" + list + ", lambda _r: starts_with(_r, " + prefix + "))), FALSE)"
}

// OpShortName implements Dialect.
func (DuckDB) OpShortName(op string) string {
	return "list_transform([string_split(" + op + ", '/')[-1]], lambda _seg:" +
		" CASE WHEN contains(_seg, ':') THEN split_part(_seg, ':', 1) ELSE '' END)[1]"
}

// EpochMillis implements Dialect.
func (DuckDB) EpochMillis(ts string) string { return "epoch_ms(" + ts + ")" }

// SumInt implements Dialect; DuckDB sums BIGINT into HUGEINT.
func (DuckDB) SumInt(expr string) string { return "CAST(sum(" + expr + ") AS BIGINT)" }

// MillisBetween implements Dialect.
func (DuckDB) MillisBetween(start, end string) string {
	return "((epoch_us(" + end + ") - epoch_us(" + start + ")) / 1000.0)"
}

// Quantiles implements Dialect: DuckDB binds identical aggregates once,
// so each element reads the same list.
func (DuckDB) Quantiles(expr string, levels ...float64) []string {
	agg := "quantile_cont(" + expr + ", [" + formatLevels(levels) + "])"
	out := make([]string, len(levels))
	for i := range levels {
		out[i] = agg + "[" + strconv.Itoa(i+1) + "]"
	}
	return out
}

// formatLevels lists quantile levels as SQL numbers.
func formatLevels(levels []float64) string {
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = strconv.FormatFloat(l, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// ArgMin implements Dialect.
func (DuckDB) ArgMin(arg, key string) string { return "arg_min(" + arg + ", " + key + ")" }

// ArgMax implements Dialect.
func (DuckDB) ArgMax(arg, key string) string { return "arg_max(" + arg + ", " + key + ")" }

// FirstBy implements Dialect.
func (DuckDB) FirstBy(value, orderBy, filter string) string {
	s := "first(" + value + " ORDER BY " + orderBy + ")"
	if filter != "" {
		s += " FILTER (WHERE " + filter + ")"
	}
	return s
}

// ObjectEntries implements Dialect with a lateral json_each.
func (DuckDB) ObjectEntries(doc, key string) (join, entryKey, entryValue string) {
	return ", json_each(" + doc + ", '$." + key + "') AS _e", "_e.key", "CAST(_e.value AS VARCHAR)"
}
