package querylang

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage/errkind"
)

// hostile builds the query shapes the limits exist for, n wide.
var hostile = struct {
	and, or, in, inLiteralArray func(n int) string
	str, key, path              func(n int) string
	segments                    func(n int) string
	padded                      func(size int) string
}{
	and: func(n int) string { return `{"$expr":{"$and":[` + repeat(eqTerm, n) + `]}}` },
	or:  func(n int) string { return `{"$expr":{"$or":[` + repeat(eqTerm, n) + `]}}` },
	in: func(n int) string {
		return `{"$expr":{"$in":[{"$getField":"inputs.model"},[` + repeat(`{"$literal":"m"}`, n) + `]]}}`
	},
	inLiteralArray: func(n int) string {
		return `{"$expr":{"$eq":[{"$getField":"inputs.tags"},{"$literal":[` + repeat(`{"$literal":1}`, n) + `]}]}}`
	},
	str: func(n int) string {
		return `{"$expr":{"$contains":{"input":{"$getField":"inputs.q"},"substr":{"$literal":"` + strings.Repeat("x", n) + `"}}}}`
	},
	key: func(n int) string {
		return `{"$expr":{"$eq":[{"$getField":"a"},{"$literal":{"` + strings.Repeat("k", n) + `":{"$literal":1}}}]}}`
	},
	path: func(n int) string {
		return `{"$expr":{"$eq":[{"$getField":"` + strings.Repeat("p", n) + `"},{"$literal":1}]}}`
	},
	segments: func(n int) string {
		return `{"$expr":{"$eq":[{"$getField":"inputs` + strings.Repeat(".a", n-1) + `"},{"$literal":1}]}}`
	},
	padded: func(size int) string {
		doc := `{"$expr":` + eqTerm + `}`
		return `{"$expr":` + strings.Repeat(" ", size-len(doc)) + eqTerm + `}`
	},
}

const eqTerm = `{"$eq":[{"$getField":"inputs.model"},{"$literal":"m3"}]}`

func repeat(term string, n int) string {
	return strings.TrimSuffix(strings.Repeat(term+",", n), ",")
}

// nodesDoc has exactly n nodes: an $or of two $in lists.
func nodesDoc(n int) string {
	first := (n - 5) / 2
	second := n - 5 - first
	in := func(k int) string {
		return `{"$in":[{"$getField":"a"},[` + repeat(`{"$literal":1}`, k) + `]]}`
	}
	return `{"$expr":{"$or":[` + in(first) + `,` + in(second) + `]}}`
}

// objectsDoc has exactly n nodes, nearly two objects each (the most the
// object count before decoding allows): an object literal of n-3 empty
// object literals.
func objectsDoc(n int) string {
	keys := make([]string, n-3)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":{"$literal":{}}`, i)
	}
	return `{"$expr":{"$eq":[{"$getField":"a"},{"$literal":{` + strings.Join(keys, ",") + `}}]}}`
}

// TestLimitsAtAndOver parses each hostile shape at a limit, which is
// accepted, and one past it, which is refused with a *LimitError naming
// the place, the limit and its setting.
func TestLimitsAtAndOver(t *testing.T) {
	d := DefaultLimits()
	small := Limits{MaxQueryBytes: 500, MaxOperands: 3, MaxInList: 10, MaxNodes: 21, MaxStringBytes: 16, MaxPathSegments: 3, MaxSortKeys: 2}
	tests := []struct {
		name    string
		lim     Limits
		doc     func(n int) string
		at      int
		loc     string
		setting string
	}{
		{"query bytes", d, hostile.padded, d.MaxQueryBytes, "query has 262145 bytes", "queries.max_query_bytes"},
		{"and operands", d, hostile.and, d.MaxOperands, "query.$expr.$and has 101 operands", "queries.max_operands"},
		{"or operands", d, hostile.or, d.MaxOperands, "query.$expr.$or has 101 operands", "queries.max_operands"},
		{"in list", d, hostile.in, d.MaxInList, "query.$expr.$in[1] has 1001 elements", "queries.max_in_list"},
		{"nodes", d, nodesDoc, d.MaxNodes, "query has more than 2000 nodes", "queries.max_nodes"},
		{"nodes in object literals", d, objectsDoc, d.MaxNodes, "query has more than 2000 nodes", "queries.max_nodes"},
		{"nodes in an array literal", d, hostile.inLiteralArray, d.MaxNodes - 3, "query has more than 2000 nodes", "queries.max_nodes"},
		{"literal string", d, hostile.str, d.MaxStringBytes, "query.$expr.$contains.substr.$literal has 65537 bytes", "queries.max_string_bytes"},
		{"literal key", d, hostile.key, d.MaxStringBytes, "query.$expr.$eq[1].$literal has 65537 bytes in a key", "queries.max_string_bytes"},
		{"field path bytes", d, hostile.path, d.MaxStringBytes, "query.$expr.$eq[0].$getField has 65537 bytes", "queries.max_string_bytes"},
		{"field path segments", d, hostile.segments, d.MaxPathSegments, "query.$expr.$eq[0].$getField has 65 path segments", "queries.max_path_segments"},
		{"small: query bytes", small, hostile.padded, 500, "query has 501 bytes", "queries.max_query_bytes"},
		{"small: operands", small, hostile.and, 3, "query.$expr.$and has 4 operands", "queries.max_operands"},
		{"small: in list", small, hostile.in, 10, "query.$expr.$in[1] has 11 elements", "queries.max_in_list"},
		{"small: nodes", small, nodesDoc, 21, "query has more than 21 nodes", "queries.max_nodes"},
		{"small: nodes in object literals", small, objectsDoc, 21, "query has more than 21 nodes", "queries.max_nodes"},
		{"small: string", small, hostile.str, 16, "has 17 bytes", "queries.max_string_bytes"},
		{"small: segments", small, hostile.segments, 3, "has 4 path segments", "queries.max_path_segments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.lim.Parse(json.RawMessage(tt.doc(tt.at))); err != nil {
				t.Fatalf("at the limit (%d): %v", tt.at, err)
			}
			_, err := tt.lim.Parse(json.RawMessage(tt.doc(tt.at + 1)))
			var le *LimitError
			if !errors.As(err, &le) || !errors.Is(err, errkind.InvalidArgument) {
				t.Fatalf("one past the limit: %v; want a *LimitError wrapping ErrInvalidArgument", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.loc) || !strings.Contains(msg, "("+tt.setting+")") {
				t.Errorf("error %q; want it to name %q and (%s)", msg, tt.loc, tt.setting)
			}
			if _, err := Parse(json.RawMessage(tt.doc(tt.at + 1))); err != nil {
				t.Errorf("Parse, which bounds nesting only, refused it: %v", err)
			}
		})
	}
}

// TestLimitsErrorText checks whole answers, the 8,000-term $and
// among them: refused for its size before it is decoded, or, with room
// for it, for its nodes before it is parsed.
func TestLimitsErrorText(t *testing.T) {
	tests := []struct {
		lim  Limits
		doc  string
		want string
	}{
		{DefaultLimits(), hostile.and(1000),
			"query.$expr.$and has 1000 operands; at most 100 are allowed (queries.max_operands)"},
		{DefaultLimits(), hostile.and(8000),
			"query has 456020 bytes; at most 262144 are allowed (queries.max_query_bytes)"},
		{Limits{MaxQueryBytes: 1 << 20}, hostile.and(8000),
			"query has more than 2000 nodes (operations, fields and literals); at most 2000 are allowed (queries.max_nodes)"},
	}
	for _, tt := range tests {
		_, err := tt.lim.Parse(json.RawMessage(tt.doc))
		if err == nil || err.Error() != tt.want {
			t.Errorf("error %v; want %q", err, tt.want)
		}
	}
	_, err := DefaultLimits().Parse(json.RawMessage(hostile.and(1000)))
	var le *LimitError
	if !errors.As(err, &le) || le.Loc != "query.$expr.$and" || le.Count != 1000 || le.Max != 100 || le.Setting != "queries.max_operands" {
		t.Fatalf("fields %+v", le)
	}
}

// TestLimitsZeroTakesDefaults: an unset (zero) limit is the default, not
// zero.
func TestLimitsZeroTakesDefaults(t *testing.T) {
	var zero Limits
	if _, err := zero.Parse(json.RawMessage(hostile.and(DefaultMaxOperands))); err != nil {
		t.Fatalf("zero limits refused a query at the default: %v", err)
	}
	if _, err := zero.Parse(json.RawMessage(hostile.and(DefaultMaxOperands + 1))); err == nil {
		t.Fatal("zero limits accepted a query over the default")
	}
	if got := (Limits{MaxOperands: 7}).withDefaults(); got.MaxOperands != 7 || got.MaxNodes != DefaultMaxNodes {
		t.Fatalf("withDefaults = %+v", got)
	}
}

func TestLimitsEmptyQuery(t *testing.T) {
	for _, in := range []string{"", "null", " null "} {
		if e, err := DefaultLimits().Parse(json.RawMessage(in)); e != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil, nil", in, e, err)
		}
	}
}

// TestLimitsKeepSyntaxErrors: a malformed query within the limits gets
// the same *Error as from Parse, whatever the limits.
func TestLimitsKeepSyntaxErrors(t *testing.T) {
	_, err := DefaultLimits().Parse(json.RawMessage(`{"$expr":{"$like":[]}}`))
	var se *Error
	if !errors.As(err, &se) || se.Loc != "query.$expr.$like" {
		t.Fatalf("error %v; want the unknown operator's *Error", err)
	}
}

func TestCheckSort(t *testing.T) {
	d := DefaultLimits()
	keys := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("inputs.k%d", i)
		}
		return out
	}
	tests := []struct {
		name   string
		fields []string
		want   string // "" accepts
	}{
		{"none", nil, ""},
		{"at the key limit", keys(d.MaxSortKeys), ""},
		{"over the key limit", keys(d.MaxSortKeys + 1), "sort_by has 11 keys; at most 10 are allowed (queries.max_sort_keys)"},
		{"path at the segment limit", []string{"inputs" + strings.Repeat(".a", d.MaxPathSegments-1)}, ""},
		{"path over the segment limit", []string{"id", "inputs" + strings.Repeat(".a", d.MaxPathSegments)},
			"sort_by[1].field has 65 path segments; at most 64 are allowed (queries.max_path_segments)"},
		{"escaped dots are one segment", []string{"inputs" + strings.Repeat(`.a\.b`, d.MaxPathSegments-1)}, ""},
		{"field at the byte limit", []string{strings.Repeat("f", d.MaxStringBytes)}, ""},
		{"field over the byte limit", []string{strings.Repeat("f", d.MaxStringBytes+1)},
			"sort_by[0].field has 65537 bytes; at most 65536 are allowed (queries.max_string_bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.CheckSort(tt.fields)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("error %v; want %q", err, tt.want)
			case tt.want != "" && !errors.Is(err, errkind.InvalidArgument):
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
		})
	}
}

// TestCountObjects: braces inside strings, escaped quotes included, are
// not objects.
func TestCountObjects(t *testing.T) {
	tests := []struct {
		doc  string
		want int
	}{
		{`{}`, 1},
		{`{"a":{"b":{}}}`, 3},
		{`{"a":"{{{"}`, 1},
		{`{"a":"\"{"}`, 1},
		{`{"a":"\\"}{`, 2},
		{`["{",{},"}",{}]`, 2},
		{`{"unterminated`, 1},
	}
	for _, tt := range tests {
		if got := countObjects([]byte(tt.doc), 100); got != tt.want {
			t.Errorf("countObjects(%s) = %d; want %d", tt.doc, got, tt.want)
		}
	}
	if got := countObjects([]byte(strings.Repeat("{", 50)), 10); got != 11 {
		t.Errorf("count past max = %d; want it to stop at 11", got)
	}
}

func TestPathSegments(t *testing.T) {
	for _, p := range []string{"", "a", "a.b", "a..b", `a\.b`, `a\.b.c`, `a\b.c`, `a.`, `.`, `a\.`, `\\.x`} {
		if got, want := pathSegments(p), len(SplitPath(p)); got != want {
			t.Errorf("pathSegments(%q) = %d; SplitPath has %d", p, got, want)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if err := (Limits{}).Validate(); err != nil {
		t.Fatalf("zero: %v", err)
	}
	err := Limits{MaxOperands: -1, MaxSortKeys: -2}.Validate()
	for _, want := range []string{"queries.max_operands: -1 must not be negative", "queries.max_sort_keys: -2 must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want it to contain %q", err, want)
		}
	}
}

// TestLimitsKeysMatchTags keeps the settings errors name equal to the
// YAML keys the configuration reads, field by field.
func TestLimitsKeysMatchTags(t *testing.T) {
	var l Limits
	fields := l.fields()
	typ := reflect.TypeOf(l)
	if typ.NumField() != len(fields) {
		t.Fatalf("Limits has %d fields, fields() lists %d", typ.NumField(), len(fields))
	}
	v := reflect.ValueOf(&l).Elem()
	for i := range typ.NumField() {
		tag := typ.Field(i).Tag.Get("yaml")
		var found bool
		for _, f := range fields {
			if f.v == v.Field(i).Addr().Interface().(*int) {
				found = true
				if f.key != tag {
					t.Errorf("%s: key %q, YAML tag %q", typ.Field(i).Name, f.key, tag)
				}
			}
		}
		if !found {
			t.Errorf("%s is not in fields()", typ.Field(i).Name)
		}
	}
}
