package graphql

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
)

func TestParseValues(t *testing.T) {
	tests := []struct {
		name, value string
		want        any
	}{
		{"int", `-12`, int64(-12)},
		{"float", `1.5e3`, 1500.0},
		{"string escapes", `"a\"b\\c\/d\u00e9\n"`, "a\"b\\c/d\u00e9\n"},
		{"block string", `"""  two
  lines  """`, "two\n  lines"},
		{"booleans and null", `[true, false, null]`, []any{true, false, nil}},
		{"enum", `PRIVATE`, "PRIVATE"},
		{"nested object", `{a: [1, {b: "c"}], d: {}}`, map[string]any{"a": []any{int64(1), map[string]any{"b": "c"}}, "d": map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse(`{ f(v: ` + tt.value + `) }`)
			if err != nil {
				t.Fatal(err)
			}
			got, err := valueOf(doc.Operations[0].Selection[0].Field.Arguments[0].Value, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("value %#v; want %#v", got, tt.want)
			}
		})
	}
}

func TestParseVariableDefinitions(t *testing.T) {
	doc, err := Parse(`query Q($a: String!, $b: [ID!] = ["x"], $c: Int = null) @skip(if: false) { viewer { name } }`)
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Operations[0]
	if op.Kind != "query" || op.Name != "Q" || len(op.Variables) != 3 {
		t.Fatalf("operation %+v", op)
	}
	want := []VariableDef{
		{Name: "a", Type: "String!", NonNull: true},
		{Name: "b", Type: "[ID!]", Default: List{Scalar{V: "x"}}, HasValue: true},
		{Name: "c", Type: "Int", Default: Null{}, HasValue: true},
	}
	if !reflect.DeepEqual(op.Variables, want) {
		t.Errorf("variables %#v\nwant      %#v", op.Variables, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"empty", ``, "no operation"},
		{"only a fragment", `fragment F on User { name }`, "no operation"},
		{"unterminated string", `{ f(v: "abc) }`, "unterminated string"},
		{"newline in string", "{ f(v: \"a\nb\") }", "unterminated string"},
		{"bad escape", `{ f(v: "\q") }`, "invalid string"},
		{"unterminated block string", `{ f(v: """abc) }`, "unterminated block string"},
		{"number without digits", `{ f(v: -) }`, "needs digits"},
		{"number then letters", `{ f(v: 12ab) }`, "invalid number"},
		{"number without fraction", `{ f(v: 1.) }`, "after '.'"},
		{"number without exponent", `{ f(v: 1e) }`, "exponent"},
		{"huge int", `{ f(v: 99999999999999999999) }`, "out of range"},
		{"empty selection", `{ }`, "at least one field"},
		{"empty arguments", `{ f() }`, "must not be empty"},
		{"unclosed selection", `{ viewer { name }`, "expected a name, found end of document"},
		{"variable in default", `query ($a: Int = $b) { f }`, "cannot use a variable"},
		{"fragment named on", `fragment on on User { name } { f }`, `named "on"`},
		{"duplicate fragment", `fragment A on User { a } fragment A on User { b } { f }`, "only one fragment"},
		{"fragment without type", `fragment A { a } { f }`, `expected "on"`},
		{"schema definition", `type Query { f: Int }`, "expected query, mutation or fragment"},
		{"stray character", `{ f ? }`, "unexpected character"},
		{"too deep", strings.Repeat("{ f ", 40) + strings.Repeat("}", 40), "deeper than"},
		{"too many tokens", "{ " + strings.Repeat("f ", maxTokens) + "}", "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v; want one containing %q", err, tt.want)
			}
			if se, ok := err.(*SyntaxError); !ok || se.Line < 1 || se.Col < 1 {
				t.Errorf("error %T %v has no location", err, err)
			}
		})
	}
}

// FuzzParse feeds arbitrary documents to the parser and the executor:
// neither may panic, and every answer is a JSON object with data or errors.
func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "sdk-documents.json"))
	if err != nil {
		f.Fatal(err)
	}
	var cases []struct{ Query string }
	if err := json.Unmarshal(raw, &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Query)
	}
	f.Add(`query ($a: Boolean = true) { viewer { ...U @include(if: $a) ... on User { x: name } } } fragment U on User { username }`)
	f.Add(`{ f(v: """block \""" string""", w: [1, -2.5e3, {a: null}], e: ENUM) }`)
	schema := WandbSchema()
	ctx := withPrincipal(context.Background(), auth.Principal{UserID: "u", Entity: auth.AllEntities, Role: auth.RoleAdmin})
	f.Fuzz(func(t *testing.T, doc string) {
		_, perr := Parse(doc)
		res := schema.Execute(ctx, Request{Query: doc, Variables: map[string]any{"a": true, "name": "p"}})
		if perr != nil && (res.Data != nil || len(res.Errors) != 1) {
			t.Fatalf("a document that does not parse executed: %+v", res)
		}
		out, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("answer does not marshal: %v", err)
		}
		if res.Data == nil && len(res.Errors) == 0 {
			t.Fatalf("answer without data or errors: %s", out)
		}
	})
}
