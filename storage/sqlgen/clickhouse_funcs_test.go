package sqlgen

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage/querylang"
)

// funcCase renders one expression with a dialect; the inputs are SQL
// literals both engines read alike.
type funcCase struct {
	name string
	expr func(d Dialect) string
	want string // NULL for SQL NULL; booleans as 1/0
}

// ts is a UTC timestamp literal of the dialect's time type.
func ts(d Dialect, s string) string {
	if _, ok := d.(ClickHouse); ok {
		return "toDateTime64(" + lit(s) + ", 6, 'UTC')"
	}
	return "CAST(" + lit(s) + " AS TIMESTAMP)"
}

func lit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// jsonAt renders JSONValue or JSONExists of doc at path with the path
// encoded by d, as a literal.
func jsonAt(exists bool, doc string, path ...string) func(d Dialect) string {
	return func(d Dialect) string {
		segs := make([]querylang.Segment, len(path))
		for i, p := range path {
			segs[i] = querylang.Segment{Key: p}
		}
		if exists {
			return d.JSONExists(lit(doc), lit(d.JSONPath(segs)))
		}
		return d.JSONValue(lit(doc), lit(d.JSONPath(segs)))
	}
}

func funcCases() []funcCase {
	str := func(f func(Dialect, string) string, s string) func(Dialect) string {
		return func(d Dialect) string { return f(d, lit(s)) }
	}
	parseInt := func(d Dialect, s string) string { return d.ParseInt(s) }
	parseBool := func(d Dialect, s string) string { return d.ParseBool(s) }
	parseFloat := func(d Dialect, s string) string { return d.ParseFloat(s) }
	opName := func(d Dialect, s string) string { return d.OpShortName(s) }
	return []funcCase{
		{"int spaces", str(parseInt, " 42 "), "42"}, {"int plus", str(parseInt, "+7"), "7"},
		{"int minus", str(parseInt, "-3"), "-3"}, {"int fraction", str(parseInt, "1.5"), "NULL"},
		{"int word", str(parseInt, "abc"), "NULL"}, {"int overflow", str(parseInt, "99999999999999999999"), "NULL"},
		{"float spaces", str(parseFloat, " 2.5 "), "2.5"}, {"float exponent", str(parseFloat, "1e3"), "1000"},
		{"float word", str(parseFloat, "x"), "NULL"},
		{"bool true", str(parseBool, "true"), "1"}, {"bool false", str(parseBool, "false"), "0"},
		{"bool small int", str(parseBool, " +12 "), "12"}, {"bool too big", str(parseBool, "256"), "NULL"},
		{"bool word", str(parseBool, "yes"), "NULL"},
		{"float text integral", func(d Dialect) string { return d.ToText("CAST(5.0 AS DOUBLE)", TypeFloat) }, "5"},
		{"float text fraction", func(d Dialect) string { return d.ToText("CAST(2.5 AS DOUBLE)", TypeFloat) }, "2.5"},
		{"bool text", func(d Dialect) string { return d.ToText("(1 = 1)", TypeBool) }, "true"},
		{"int text", func(d Dialect) string { return d.ToText("CAST(-4 AS BIGINT)", TypeInt) }, "-4"},
		{"time text", func(d Dialect) string { return d.ToText(ts(d, "2024-01-01 00:01:10.5"), TypeTime) }, "2024-01-01 00:01:10.5"},
		{"whole time text", func(d Dialect) string { return d.ToText(ts(d, "2024-01-01 00:01:00"), TypeTime) }, "2024-01-01 00:01:00"},
		{"epoch millis", func(d Dialect) string { return d.EpochMillis(ts(d, "2024-01-01 00:00:01.25")) }, "1704067201250"},
		{"millis between", func(d Dialect) string {
			return d.MillisBetween(ts(d, "2024-01-01 00:00:01"), ts(d, "2024-01-01 00:00:02.0005"))
		}, "1000.5"},
		{"op short name", str(opName, "weave:///e/p/op/name:abc"), "name"},
		{"op without digest", str(opName, "weave:///e/p/op/name"), ""}, {"plain op", str(opName, "plain"), ""},
		{"token ci", func(d Dialect) string { return d.HasToken(lit("Hello, World!"), lit("world"), true) }, "1"},
		{"token partial", func(d Dialect) string { return d.HasToken(lit("Hello"), lit("ell"), false) }, "0"},
		{"token of null", func(d Dialect) string { return d.HasToken("NULLIF('', '')", lit("a"), false) }, "NULL"},
		{"contains unicode ci", func(d Dialect) string { return d.Contains(lit("ÄBC"), lit("äb"), true) }, "1"},
		{"contains cs", func(d Dialect) string { return d.Contains(lit("ABC"), lit("ab"), false) }, "0"},
		{"strip prefix", func(d Dialect) string { return d.StripPrefix(lit("abcdef"), lit("abc")) }, "def"},
		{"starts with", func(d Dialect) string { return d.StartsWith(lit("abcdef"), lit("abc")) }, "1"},
		{"list has prefix", func(d Dialect) string { return d.ListHasPrefix("['x:1', 'ab:2']", lit("ab:")) }, "1"},
		{"list has any", func(d Dialect) string { return d.ListHasAny("['x', 'y']", []string{lit("z"), lit("y")}) }, "1"},
		{"text length", func(d Dialect) string { return d.TextLength(lit("héllo")) }, "6"},
		{"json nested null", jsonAt(false, `{"a": [1, {"b": null}]}`, "a", "1", "b"), ""},
		{"json array", jsonAt(false, `{"a": [1, {"b": null}]}`, "a"), `[1,{"b":null}]`},
		{"json index past end", jsonAt(false, `{"a": [1]}`, "a", "1"), ""},
		{"json numeric key on object", jsonAt(false, `{"1": "one"}`, "1"), "one"},
		{"json whole string", jsonAt(false, `"s\u00e9"`), "sé"},
		{"json bool", jsonAt(false, `{"a": true}`, "a"), "true"},
		{"json float", jsonAt(false, `{"a": 1.50}`, "a"), "1.5"},
		{"exists null", jsonAt(true, `{"a": null}`, "a"), "0"},
		{"exists empty object", jsonAt(true, `{"a": {}}`, "a"), "1"},
		{"exists missing", jsonAt(true, `{"a": 1}`, "b"), "0"},
	}
}

// TestDialectFunctionsAgree evaluates each dialect function on DuckDB and
// on ClickHouse with the same inputs and expects the same answer.
func TestDialectFunctionsAgree(t *testing.T) {
	duck := openDB(t)
	ch := openCH(t, nil, nil)
	for _, tc := range funcCases() {
		t.Run(tc.name, func(t *testing.T) {
			var dv any
			if err := duck.QueryRow("SELECT " + tc.expr(NewDuckDB())).Scan(&dv); err != nil {
				t.Fatalf("duckdb: %v", err)
			}
			rows, err := ch.Query(context.Background(), "SELECT "+tc.expr(NewClickHouse()))
			if err != nil {
				t.Fatalf("clickhouse: %v", err)
			}
			defer rows.Close()
			if !rows.Next() {
				t.Fatalf("clickhouse: no row: %v", rows.Err())
			}
			cv := reflect.New(rows.ColumnTypes()[0].ScanType())
			if err := rows.Scan(cv.Interface()); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{"duckdb": canon(reflect.ValueOf(dv)), "clickhouse": canon(cv.Elem())}
			for engine, v := range got {
				if v != tc.want {
					t.Errorf("%s: got %q; want %q", engine, v, tc.want)
				}
			}
		})
	}
}

// canon prints a scanned value the same way for both engines.
func canon(v reflect.Value) string {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return "NULL"
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return "NULL"
	}
	switch x := v.Interface().(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v.Interface())
}
