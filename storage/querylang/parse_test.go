package querylang

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage/errkind"
)

func field(p string) *GetField { return &GetField{Path: p} }
func lit(v any) *Literal       { return &Literal{Value: v} }

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Expr
	}{
		{"eq", `{"$expr":{"$eq":[{"$getField":"op_name"},{"$literal":"predict"}]}}`,
			&Compare{Op: OpEq, Left: field("op_name"), Right: lit("predict")}},
		{"gt int", `{"$expr":{"$gt":[{"$getField":"summary.usage.tokens"},{"$literal":100}]}}`,
			&Compare{Op: OpGt, Left: field("summary.usage.tokens"), Right: lit(int64(100))}},
		{"gte float", `{"$expr":{"$gte":[{"$getField":"a"},{"$literal":1.5}]}}`,
			&Compare{Op: OpGte, Left: field("a"), Right: lit(1.5)}},
		{"lt exponent is float", `{"$expr":{"$lt":[{"$getField":"a"},{"$literal":1e3}]}}`,
			&Compare{Op: OpLt, Left: field("a"), Right: lit(1000.0)}},
		{"lte fraction zero is float", `{"$expr":{"$lte":[{"$getField":"a"},{"$literal":5.0}]}}`,
			&Compare{Op: OpLte, Left: field("a"), Right: lit(5.0)}},
		{"huge int becomes float", `{"$expr":{"$eq":[{"$getField":"a"},{"$literal":123456789012345678901234}]}}`,
			&Compare{Op: OpEq, Left: field("a"), Right: lit(1.2345678901234568e23)}},
		{"bool and null", `{"$expr":{"$or":[{"$eq":[{"$getField":"a"},{"$literal":true}]},{"$eq":[{"$getField":"b"},{"$literal":null}]}]}}`,
			&Or{Operands: []Expr{
				&Compare{Op: OpEq, Left: field("a"), Right: lit(true)},
				&Compare{Op: OpEq, Left: field("b"), Right: lit(nil)}}}},
		{"and of one", `{"$expr":{"$and":[{"$eq":[{"$getField":"a"},{"$literal":"x"}]}]}}`,
			&And{Operands: []Expr{&Compare{Op: OpEq, Left: field("a"), Right: lit("x")}}}},
		{"not", `{"$expr":{"$not":[{"$eq":[{"$getField":"a"},{"$literal":"x"}]}]}}`,
			&Not{Operand: &Compare{Op: OpEq, Left: field("a"), Right: lit("x")}}},
		{"in", `{"$expr":{"$in":[{"$getField":"op_name"},[{"$literal":"a"},{"$literal":"b"}]]}}`,
			&In{Operand: field("op_name"), List: []Expr{lit("a"), lit("b")}}},
		{"in empty list", `{"$expr":{"$in":[{"$getField":"op_name"},[]]}}`,
			&In{Operand: field("op_name"), List: []Expr{}}},
		{"contains default", `{"$expr":{"$contains":{"input":{"$getField":"display_name"},"substr":{"$literal":"llm"}}}}`,
			&Contains{Input: field("display_name"), Substr: lit("llm")}},
		{"contains ci", `{"$expr":{"$contains":{"input":{"$getField":"d"},"substr":{"$literal":"x"},"case_insensitive":true}}}`,
			&Contains{Input: field("d"), Substr: lit("x"), CaseInsensitive: true}},
		{"contains ci null", `{"$expr":{"$contains":{"input":{"$getField":"d"},"substr":{"$literal":"x"},"case_insensitive":null}}}`,
			&Contains{Input: field("d"), Substr: lit("x")}},
		{"containsToken", `{"$expr":{"$containsToken":{"input":{"$getField":"d"},"substr":{"$literal":"x"},"case_insensitive":false}}}`,
			&ContainsToken{Input: field("d"), Substr: lit("x")}},
		{"convert", `{"$expr":{"$gt":[{"$convert":{"input":{"$getField":"inputs.n"},"to":"double"}},{"$literal":2}]}}`,
			&Compare{Op: OpGt, Left: &Convert{Input: field("inputs.n"), To: CastDouble}, Right: lit(int64(2))}},
		{"convert exists", `{"$expr":{"$eq":[{"$convert":{"input":{"$getField":"inputs.n"},"to":"exists"}},{"$literal":true}]}}`,
			&Compare{Op: OpEq, Left: &Convert{Input: field("inputs.n"), To: CastExists}, Right: lit(true)}},
		{"object and array literal", `{"$expr":{"$eq":[{"$getField":"payload"},{"$literal":{"a":{"$literal":[{"$literal":1},{"$literal":"x"}]}}}]}}`,
			&Compare{Op: OpEq, Left: field("payload"), Right: lit(map[string]any{"a": []any{int64(1), "x"}})}},
		{"whitespace around", "  {\"$expr\" : {\"$eq\":[{\"$literal\":1},{\"$literal\":1}]}}\n",
			&Compare{Op: OpEq, Left: lit(int64(1)), Right: lit(int64(1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseAbsent(t *testing.T) {
	for _, in := range []string{"", "null", "  null  "} {
		got, err := Parse(json.RawMessage(in))
		if got != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil, nil", in, got, err)
		}
	}
	if got, err := Parse(nil); got != nil || err != nil {
		t.Errorf("Parse(nil) = %v, %v; want nil, nil", got, err)
	}
}

func TestParseErrors(t *testing.T) {
	eq := `{"$eq":[{"$getField":"a"},{"$literal":1}]}`
	tests := []struct {
		name, in, want string
	}{
		{"not object", `[1]`, `query: expects an object {"$expr": <operation>}`},
		{"trailing data", `{"$expr":{"$eq":[{"$literal":1},{"$literal":1}]}} {}`, "query: expects a single JSON document"},
		{"extra top key", `{"$expr":` + eq + `,"x":1}`, `query: unknown key "x"`},
		{"missing expr", `{}`, `query: expects an object {"$expr": <operation>}`},
		{"bare literal", `{"$expr":{"$literal":1}}`, "query.$expr: must be an operation"},
		{"bare field", `{"$expr":{"$getField":"a"}}`, "query.$expr: must be an operation"},
		{"unknown op", `{"$expr":{"$regex":[1]}}`, "query.$expr.$regex: unknown operator"},
		{"two keys", `{"$expr":{"$eq":[],"$gt":[]}}`, "query.$expr: expects an object with exactly one operator key, got 2 keys ($eq, $gt)"},
		{"no keys", `{"$expr":{}}`, "query.$expr: expects an object with exactly one operator key, got 0 keys"},
		{"eq arity", `{"$expr":{"$and":[` + eq + `,{"$eq":[{"$literal":1}]}]}}`, "query.$expr.$and[1].$eq: expects an array of exactly 2 operands"},
		{"eq not array", `{"$expr":{"$eq":{"a":1}}}`, "query.$expr.$eq: expects an array of exactly 2 operands"},
		{"not arity", `{"$expr":{"$not":[` + eq + `,` + eq + `]}}`, "query.$expr.$not: expects an array of exactly 1 operand"},
		{"empty and", `{"$expr":{"$and":[]}}`, "query.$expr.$and: expects a non-empty array of operands"},
		{"empty or", `{"$expr":{"$or":[]}}`, "query.$expr.$or: expects a non-empty array of operands"},
		{"or not array", `{"$expr":{"$or":{}}}`, "query.$expr.$or: expects a JSON array"},
		{"in shape", `{"$expr":{"$in":[{"$getField":"a"}]}}`, "query.$expr.$in: expects an array of exactly 2 items"},
		{"in list not array", `{"$expr":{"$in":[{"$getField":"a"},{"$literal":1}]}}`, "query.$expr.$in[1]: expects an array of operands"},
		{"in bad element", `{"$expr":{"$in":[{"$getField":"a"},[{"$literal":1},{"$x":1}]]}}`, "query.$expr.$in[1][1].$x: unknown operator"},
		{"getField not string", `{"$expr":{"$eq":[{"$getField":1},{"$literal":1}]}}`, "query.$expr.$eq[0].$getField: expects a string field path"},
		{"operand not object", `{"$expr":{"$eq":["a",{"$literal":1}]}}`, "query.$expr.$eq[0]: expects a JSON object"},
		{"convert bad to", `{"$expr":{"$eq":[{"$convert":{"input":{"$getField":"a"},"to":"date"}},{"$literal":1}]}}`, `query.$expr.$eq[0].$convert.to: expects one of "double"`},
		{"convert missing input", `{"$expr":{"$eq":[{"$convert":{"to":"int"}},{"$literal":1}]}}`, `query.$expr.$eq[0].$convert: missing required key "input"`},
		{"convert extra key", `{"$expr":{"$eq":[{"$convert":{"input":{"$literal":1},"to":"int","x":1}},{"$literal":1}]}}`, `query.$expr.$eq[0].$convert: unknown key "x"`},
		{"contains missing substr", `{"$expr":{"$contains":{"input":{"$getField":"a"}}}}`, `query.$expr.$contains: missing required key "substr"`},
		{"contains ci not bool", `{"$expr":{"$contains":{"input":{"$getField":"a"},"substr":{"$literal":"x"},"case_insensitive":"yes"}}}`, "query.$expr.$contains.case_insensitive: expects true, false or null"},
		{"contains typo key", `{"$expr":{"$contains":{"input":{"$getField":"a"},"substr":{"$literal":"x"},"case_insenstive":true}}}`, `unknown key "case_insenstive"`},
		{"literal array unwrapped", `{"$expr":{"$eq":[{"$getField":"a"},{"$literal":[1]}]}}`, "query.$expr.$eq[1].$literal[0]: expects a nested literal"},
		{"literal object unwrapped", `{"$expr":{"$eq":[{"$getField":"a"},{"$literal":{"k":1}}]}}`, "query.$expr.$eq[1].$literal.k: expects a nested literal"},
		{"float out of range", `{"$expr":{"$eq":[{"$getField":"a"},{"$literal":1e999}]}}`, "query.$expr.$eq[1].$literal: number 1e999 is out of range"},
		{"invalid json", `{"$expr":`, "query: expects a valid JSON document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(json.RawMessage(tt.in))
			if err == nil {
				t.Fatalf("Parse(%s) succeeded; want error %q", tt.in, tt.want)
			}
			if !errors.Is(err, errkind.InvalidArgument) {
				t.Errorf("error %v does not wrap ErrInvalidArgument", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseDepthLimit(t *testing.T) {
	in := `{"$eq":[{"$getField":"a"},{"$literal":1}]}`
	for range MaxDepth + 2 {
		in = `{"$not":[` + in + `]}`
	}
	_, err := Parse(json.RawMessage(`{"$expr":` + in + `}`))
	if !errors.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), "nests deeper") {
		t.Fatalf("deep query: got %v; want a nesting error", err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	docs := []string{
		`{"$expr":{"$and":[{"$eq":[{"$getField":"a\\.b.c"},{"$literal":5.0}]},{"$not":[{"$in":[{"$getField":"x"},[{"$literal":1},{"$literal":null}]]}]}]}}`,
		`{"$expr":{"$or":[{"$contains":{"input":{"$getField":"d"},"substr":{"$literal":"é\"q"},"case_insensitive":true}},{"$lte":[{"$convert":{"input":{"$getField":"n"},"to":"int"}},{"$literal":-3}]}]}}`,
		`{"$expr":{"$containsToken":{"input":{"$getField":"d"},"substr":{"$literal":"tok"}}}}`,
		`{"$expr":{"$gt":[{"$literal":{"b":{"$literal":[{"$literal":1e300}]},"a":{"$literal":false}}},{"$literal":1e-7}]}}`,
	}
	for _, doc := range docs {
		first, err := Parse(json.RawMessage(doc))
		if err != nil {
			t.Fatalf("Parse(%s): %v", doc, err)
		}
		enc, err := Encode(first)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		second, err := Parse(enc)
		if err != nil {
			t.Fatalf("re-Parse(%s): %v", enc, err)
		}
		if !reflect.DeepEqual(first, second) {
			t.Errorf("round trip changed the tree:\n%#v\n%#v", first, second)
		}
	}
}
