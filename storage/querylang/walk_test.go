package querylang

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFieldsAndWalk(t *testing.T) {
	e, err := Parse(json.RawMessage(`{"$expr":{"$and":[
		{"$eq":[{"$getField":"a"},{"$literal":1}]},
		{"$in":[{"$convert":{"input":{"$getField":"b"},"to":"int"}},[{"$getField":"c"},{"$literal":2}]]},
		{"$contains":{"input":{"$getField":"a"},"substr":{"$getField":"d"}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Fields(e), []string{"a", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fields = %v; want %v", got, want)
	}
	var skipped []string
	Walk(e, func(n Expr) bool {
		if f, ok := n.(*GetField); ok {
			skipped = append(skipped, f.Path)
		}
		_, isIn := n.(*In)
		return !isIn
	})
	if want := []string{"a", "a", "d"}; !reflect.DeepEqual(skipped, want) {
		t.Errorf("Walk with $in pruned saw %v; want %v", skipped, want)
	}
}

func TestInferCast(t *testing.T) {
	tests := []struct {
		e    Expr
		want CastType
		ok   bool
	}{
		{lit(true), CastBool, true},
		{lit(int64(3)), CastInt, true},
		{lit(2.5), CastDouble, true},
		{lit("3"), "", false},
		{lit(nil), "", false},
		{lit([]any{int64(1)}), "", false},
		{field("a"), "", false},
	}
	for _, tt := range tests {
		got, ok := InferCast(tt.e)
		if got != tt.want || ok != tt.ok {
			t.Errorf("InferCast(%#v) = %q, %v; want %q, %v", tt.e, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSharedCast(t *testing.T) {
	tests := []struct {
		name string
		list []Expr
		want CastType
		ok   bool
	}{
		{"ints", []Expr{lit(int64(1)), lit(int64(2))}, CastInt, true},
		{"int and double", []Expr{lit(int64(1)), lit(2.5)}, CastDouble, true},
		{"double and int", []Expr{lit(2.5), lit(int64(1))}, CastDouble, true},
		{"bools", []Expr{lit(true), lit(false)}, CastBool, true},
		{"int and bool", []Expr{lit(int64(1)), lit(true)}, "", false},
		{"int and string", []Expr{lit(int64(1)), lit("x")}, "", false},
		{"field", []Expr{field("a")}, "", false},
		{"empty", nil, "", false},
	}
	for _, tt := range tests {
		got, ok := SharedCast(tt.list)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: SharedCast = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsOperation(t *testing.T) {
	if IsOperation(lit(1)) || IsOperation(field("a")) || IsOperation(&Convert{Input: lit(1), To: CastInt}) || IsOperation(nil) {
		t.Error("operands reported as operations")
	}
	if !IsOperation(&Not{Operand: lit(true)}) || !IsOperation(&In{Operand: lit(1)}) {
		t.Error("operations not reported as operations")
	}
}
