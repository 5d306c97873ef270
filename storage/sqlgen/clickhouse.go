package sqlgen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/storage/querylang"
)

// ClickHouse is the Dialect of the scale-out ClickHouse backend. The calls
// table is a ReplacingMergeTree, so every read of it goes through FINAL and
// sees one version per call. Absent strings and JSON documents are stored
// as the empty string (a sentinel, not NULL); ended_at, exception,
// deleted_at and the run steps stay Nullable, so the NULL tests the
// generator writes hold as on DuckDB. Parameters are server-side, typed
// {pN:Type} placeholders: bind argument i as ParamName(i+1) with the value
// ParamValue returns.
type ClickHouse struct{}

var _ Dialect = ClickHouse{}

// NewClickHouse returns the ClickHouse dialect.
func NewClickHouse() ClickHouse { return ClickHouse{} }

// ParamName is the name argument n (1-based) is bound under.
func (ClickHouse) ParamName(n int) string { return "p" + strconv.Itoa(n) }

// DateTime64(6) holds 1900-01-01 to 2299-12-31; times outside are clamped
// to its ends, which no stored value passes, so comparisons keep their
// answer.
var (
	chMinTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	chMaxTime = time.Date(2299, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// ParamValue converts a bound argument to the value the driver sends:
// times in UTC at microsecond precision within the DateTime64 range.
func (ClickHouse) ParamValue(v any) any {
	t, ok := v.(time.Time)
	if !ok {
		return v
	}
	t = t.UTC().Truncate(time.Microsecond)
	if t.Before(chMinTime) {
		return chMinTime
	}
	if t.After(chMaxTime) {
		return chMaxTime
	}
	return t
}

// Param implements Dialect.
func (d ClickHouse) Param(n int, t Type) string {
	return "{" + d.ParamName(n) + ":" + chType(t) + "}"
}

func chType(t Type) string {
	switch t {
	case TypeInt:
		return "Int64"
	case TypeFloat:
		return "Float64"
	case TypeBool:
		return "Bool"
	case TypeTime:
		return "DateTime64(6, 'UTC')"
	case TypeStringList:
		return "Array(String)"
	case TypeIntList:
		return "Array(Int64)"
	case TypeFloatList:
		return "Array(Float64)"
	}
	return "String"
}

// ReadCurrent implements Dialect: FINAL collapses the versions of a call
// before WHERE is applied.
func (ClickHouse) ReadCurrent(table, alias string) string {
	return table + " AS " + alias + " FINAL"
}

// PageKey implements Dialect: (anchor_at, id), the tail of the calls
// table's sorting key, so the heavy phase is a primary-key read of the
// page's rows.
func (ClickHouse) PageKey(alias string) string { return "(" + alias + ".anchor_at, " + alias + ".id)" }

// PageJoin implements Dialect. The page is the right side, the one
// ClickHouse builds a hash table of, and the IN list lets the primary key
// skip every granule outside the page.
func (d ClickHouse) PageJoin(page, table, alias, project string) string {
	return "(SELECT * FROM " + table + " AS " + alias + " FINAL WHERE " + alias + ".project_id = " + project +
		" AND " + d.PageKey(alias) + " IN (SELECT _k FROM " + page + ")) AS " + alias +
		" INNER JOIN " + page + " ON " + page + "._k = " + d.PageKey(alias)
}

// JSONText implements Dialect: JSON is stored as String text.
func (ClickHouse) JSONText(col string) string { return col }

// RawSpanText implements Dialect: the dump is stored as it came.
func (ClickHouse) RawSpanText(alias string) string { return alias + ".otel_dump" }

// JSONPath implements Dialect: the keys as a JSON array of strings, which
// chRawAt folds over.
func (ClickHouse) JSONPath(segs []querylang.Segment) string {
	keys := make([]string, len(segs))
	for i, s := range segs {
		keys[i] = s.Key
	}
	b, err := json.Marshal(keys)
	if err != nil {
		panic(fmt.Sprintf("BUG: marshal JSON path: %v", err))
	}
	return string(b)
}

// chRawAt is the minified JSON text at path in doc, empty when missing
// (JSONExtractRaw minifies; an empty path is the whole document). A key
// that is a canonical integer indexes an array (0-based), as a JSON
// pointer does; on an object it is a key. JSONExtractRaw normalises
// numbers ("5.0" is "5", "1e3" is "1000") and unescapes strings.
func chRawAt(doc, path string) string {
	keys, text := "JSONExtract("+path+", 'Array(String)')", "ifNull("+doc+", '')"
	return "if(empty(" + keys + "), JSONExtractRaw(" + text + "), " +
		"arrayFold((_acc, _key) -> if(JSONType(_acc) = 'Array', " +
		"if(match(_key, '^(0|[1-9][0-9]*)$'), JSONExtractRaw(_acc, toInt64OrZero(_key) + 1), ''), " +
		"JSONExtractRaw(_acc, _key)), " + keys + ", " + text + "))"
}

// chOnce evaluates body with name bound to expr: a lambda over a
// one-element array, so a large expr is written and planned once.
func chOnce(name, expr, body string) string {
	return "arrayMap(" + name + " -> " + body + ", [" + expr + "])[1]"
}

// JSONValue implements Dialect.
func (ClickHouse) JSONValue(doc, path string) string {
	return chOnce("_wv", chRawAt(doc, path),
		"multiIf(JSONType(_wv) = 'String', JSONExtractString(_wv), JSONType(_wv) = 'Null', '', _wv)")
}

// JSONExists implements Dialect.
func (ClickHouse) JSONExists(doc, path string) string {
	return "(JSONType(" + chRawAt(doc, path) + ") <> 'Null')"
}

// TextLength implements Dialect.
func (ClickHouse) TextLength(expr string) string { return "toInt64(length(" + expr + "))" }

// ParseInt implements Dialect. toInt64OrNull rejects surrounding spaces
// and overflow, so the text is trimmed and overflow stays NULL.
func (ClickHouse) ParseInt(s string) string {
	return chOnce("_pi", s, "if(match(_pi, '^\\\\s*[+-]?[0-9]+\\\\s*$'), toInt64OrNull(trimBoth(_pi)), NULL)")
}

// ParseFloat implements Dialect.
func (ClickHouse) ParseFloat(s string) string { return "toFloat64OrNull(trimBoth(" + s + "))" }

// ParseBool implements Dialect.
func (ClickHouse) ParseBool(s string) string {
	return chOnce("_pb", s, "multiIf(_pb = 'true', toInt64(1), _pb = 'false', toInt64(0), "+
		"match(_pb, '^\\\\s*[+]?[0-9]{1,3}\\\\s*$') AND toInt64OrZero(trimBoth(_pb)) <= 255, toInt64OrNull(trimBoth(_pb)), NULL)")
}

// floatText prints a double the way the reference server prints numbers:
// integral values without a fraction.
func (ClickHouse) floatText(x string) string {
	return "if(isFinite(" + x + ") AND " + x + " = trunc(" + x + ") AND abs(" + x + ") < 1e38, " +
		"toString(toInt128(" + x + ")), toString(" + x + "))"
}

// ToText implements Dialect. Times print as DuckDB prints them: without
// trailing fractional zeros.
func (d ClickHouse) ToText(expr string, t Type) string {
	switch t {
	case TypeString:
		return expr
	case TypeFloat:
		return chOnce("_ft", expr, d.floatText("_ft"))
	case TypeBool:
		return "CASE WHEN " + expr + " THEN 'true' WHEN NOT " + expr + " THEN 'false' END"
	case TypeTime:
		return "replaceRegexpOne(toString(" + expr + "), '\\\\.?0+$', '')"
	}
	return "toString(" + expr + ")"
}

// Contains implements Dialect.
func (ClickHouse) Contains(hay, needle string, ci bool) string {
	if ci {
		return "(positionUTF8(lowerUTF8(" + hay + "), lowerUTF8(" + needle + ")) > 0)"
	}
	return "(position(" + hay + ", " + needle + ") > 0)"
}

// HasToken implements Dialect. splitByRegexp takes no NULL, so NULL
// operands are answered before it runs.
func (ClickHouse) HasToken(hay, needle string, ci bool) string {
	h, n := "ifNull("+hay+", '')", "ifNull("+needle+", '')"
	if ci {
		h, n = "lowerUTF8("+h+")", "lowerUTF8("+n+")"
	}
	return "if(isNull(" + hay + ") OR isNull(" + needle + "), NULL, " +
		"has(splitByRegexp('[^0-9A-Za-z\\\\x{80}-\\\\x{10FFFF}]+', " + h + "), " + n + "))"
}

// StartsWith implements Dialect.
func (ClickHouse) StartsWith(s, prefix string) string { return "startsWith(" + s + ", " + prefix + ")" }

// StripPrefix implements Dialect.
func (ClickHouse) StripPrefix(s, prefix string) string {
	return "substring(" + s + ", length(" + prefix + ") + 1)"
}

// StoredList implements Dialect: refs are Array(String) columns.
func (ClickHouse) StoredList(col string) string { return col }

// ListHasAny implements Dialect.
func (ClickHouse) ListHasAny(list string, elems []string) string {
	return "hasAny(" + list + ", [" + strings.Join(elems, ", ") + "])"
}

// ListHasPrefix implements Dialect.
func (ClickHouse) ListHasPrefix(list, prefix string) string {
	return "arrayExists(_r -> startsWith(_r, " + prefix + "), " + list + ")"
}

// OpShortName implements Dialect.
func (ClickHouse) OpShortName(op string) string {
	seg := "splitByChar('/', " + op + ")[-1]"
	return "if(position(" + seg + ", ':') > 0, splitByChar(':', " + seg + ")[1], '')"
}

// EpochMillis implements Dialect.
func (ClickHouse) EpochMillis(ts string) string { return "toUnixTimestamp64Milli(" + ts + ")" }

// SumInt implements Dialect.
func (ClickHouse) SumInt(expr string) string { return "toInt64(sum(" + expr + "))" }

// MillisBetween implements Dialect.
func (ClickHouse) MillisBetween(start, end string) string {
	return "((toUnixTimestamp64Micro(" + end + ") - toUnixTimestamp64Micro(" + start + ")) / 1000.0)"
}

// Quantiles implements Dialect: the inclusive exact quantiles
// interpolate linearly between the two nearest values, as quantile_cont
// does; ClickHouse computes identical aggregates once.
func (ClickHouse) Quantiles(expr string, levels ...float64) []string {
	agg := "quantilesExactInclusive(" + formatLevels(levels) + ")(" + expr + ")"
	out := make([]string, len(levels))
	for i := range levels {
		out[i] = agg + "[" + strconv.Itoa(i+1) + "]"
	}
	return out
}

// ArgMin implements Dialect; aggregates skip rows whose key is NULL.
func (ClickHouse) ArgMin(arg, key string) string { return "argMin(" + arg + ", " + key + ")" }

// ArgMax implements Dialect.
func (ClickHouse) ArgMax(arg, key string) string { return "argMax(" + arg + ", " + key + ")" }

// FirstBy implements Dialect. orderBy is a list of ascending keys, which
// argMin compares as a tuple.
func (ClickHouse) FirstBy(value, orderBy, filter string) string {
	if filter == "" {
		return "argMin(" + value + ", (" + orderBy + "))"
	}
	return "argMinIf(" + value + ", (" + orderBy + "), " + filter + ")"
}

// ObjectEntries implements Dialect with an ARRAY JOIN of the raw entries.
func (ClickHouse) ObjectEntries(doc, key string) (join, entryKey, entryValue string) {
	return " ARRAY JOIN JSONExtractKeysAndValuesRaw(" + doc + ", '" + key + "') AS _e", "_e.1", "_e.2"
}
