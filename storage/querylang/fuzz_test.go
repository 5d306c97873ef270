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

func FuzzParse(f *testing.F) {
	seeds := []string{
		`{"$expr":{"$eq":[{"$getField":"op_name"},{"$literal":"predict"}]}}`,
		`{"$expr":{"$and":[{"$gt":[{"$getField":"a"},{"$literal":1.5}]},{"$not":[{"$lt":[{"$literal":1},{"$literal":2}]}]}]}}`,
		`{"$expr":{"$in":[{"$getField":"a"},[{"$literal":"x"},{"$literal":null}]]}}`,
		`{"$expr":{"$contains":{"input":{"$getField":"d"},"substr":{"$literal":"x"},"case_insensitive":true}}}`,
		`{"$expr":{"$containsToken":{"input":{"$getField":"d"},"substr":{"$literal":"x"}}}}`,
		`{"$expr":{"$or":[{"$lte":[{"$convert":{"input":{"$getField":"n"},"to":"exists"}},{"$literal":true}]}]}}`,
		`{"$expr":{"$eq":[{"$literal":{"a":{"$literal":[{"$literal":1}]}}},{"$literal":-0.0}]}}`,
		`null`, `{}`, `[]`, `{"$expr":{"$and":[]}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data)
		if err != nil {
			if !errors.Is(err, errkind.InvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		if e == nil {
			return
		}
		enc, err := Encode(e)
		if err != nil {
			t.Fatalf("Encode of an accepted query failed: %v", err)
		}
		again, err := Parse(enc)
		if err != nil {
			t.Fatalf("re-Parse(%s): %v", enc, err)
		}
		if !reflect.DeepEqual(e, again) {
			t.Fatalf("round trip changed the tree for %s", enc)
		}
		if !json.Valid(enc) {
			t.Fatalf("Encode produced invalid JSON %s", enc)
		}
	})
}

// fuzzLimits are small enough for generated documents to cross each one.
var fuzzLimits = Limits{MaxQueryBytes: 2048, MaxOperands: 4, MaxInList: 6, MaxNodes: 40, MaxStringBytes: 24,
	MaxPathSegments: 4, MaxSortKeys: 2}

// FuzzParseLimited checks Limits.Parse against the tree it answers: an
// accepted document is within every limit (counted here independently of
// the parser) and parses the same without limits; a refused one is an
// invalid argument, either over a limit or malformed as Parse says.
func FuzzParseLimited(f *testing.F) {
	for _, s := range []string{
		`{"$expr":{"$eq":[{"$getField":"op_name"},{"$literal":"predict"}]}}`,
		hostile.and(4), hostile.and(5), hostile.or(5), hostile.in(6), hostile.in(7),
		hostile.str(24), hostile.str(25), hostile.key(25), hostile.path(25), hostile.segments(5),
		hostile.inLiteralArray(36), hostile.inLiteralArray(38), nodesDoc(40), nodesDoc(41),
		`{"$expr":{"$and":[{"$or":[` + eqTerm + `,` + eqTerm + `]},{"$not":[{"$in":[{"$getField":"a\\.b.c"},[]]}]}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := fuzzLimits.Parse(data)
		plain, plainErr := Parse(data)
		if err != nil {
			if !errors.Is(err, errkind.InvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			var le *LimitError
			if !errors.As(err, &le) && (plainErr == nil || plainErr.Error() != err.Error()) {
				t.Fatalf("within limits, refused with %v; Parse says %v", err, plainErr)
			}
			return
		}
		if plainErr != nil {
			t.Fatalf("accepted within limits, refused without: %v", plainErr)
		}
		if !reflect.DeepEqual(e, plain) {
			t.Fatal("limits changed the parsed tree")
		}
		if len(data) > fuzzLimits.MaxQueryBytes {
			t.Fatalf("accepted %d bytes", len(data))
		}
		if msg := overLimits(e, fuzzLimits); msg != "" {
			t.Fatalf("accepted a query over its limits: %s", msg)
		}
	})
}

// FuzzHostileShapes builds the shapes that cost a store seconds (wide
// $and/$or, long $in lists, deep nesting, huge strings and paths, big
// array literals) at generated sizes: parsing never panics, and either
// errs with an invalid argument or answers a tree within the defaults.
func FuzzHostileShapes(f *testing.F) {
	f.Add(uint8(0), uint16(8000), uint8(1), uint32(2))
	f.Add(uint8(1), uint16(100), uint8(64), uint32(2))
	f.Add(uint8(2), uint16(60000), uint8(3), uint32(36))
	f.Add(uint8(3), uint16(1), uint8(1), uint32(1<<20))
	f.Add(uint8(4), uint16(70), uint8(2), uint32(65537))
	f.Add(uint8(5), uint16(2001), uint8(4), uint32(8))
	f.Add(uint8(6), uint16(99), uint8(30), uint32(3))
	lim := DefaultLimits()
	f.Fuzz(func(t *testing.T, shape uint8, width uint16, depth uint8, strLen uint32) {
		doc := hostileDoc(shape, int(width), int(depth%80), int(strLen%(2<<20)))
		e, err := lim.Parse(json.RawMessage(doc))
		if err != nil {
			if !errors.Is(err, errkind.InvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		if len(doc) > lim.MaxQueryBytes {
			t.Fatalf("accepted %d bytes", len(doc))
		}
		if msg := overLimits(e, lim); msg != "" {
			t.Fatalf("accepted a query over the defaults: %s", msg)
		}
	})
}

// hostileDoc renders one generated shape; depth wraps it in $not (or
// nests $and for shape 1).
func hostileDoc(shape uint8, width, depth, strLen int) string {
	str := strings.Repeat("x", strLen)
	var body string
	switch shape % 7 {
	case 0: // wide $and of identical terms
		body = `{"$and":[` + repeat(eqTerm, max(width, 1)) + `]}`
	case 1: // nested $or: 4 wide down to 6 levels (4,096 terms), else 1 wide
		w := max(min(width, 4), 1)
		if w > 1 {
			depth = min(depth, 6)
		}
		body = eqTerm
		for range depth {
			body = `{"$or":[` + repeat(body, w) + `]}`
		}
		depth = 0
	case 2: // long $in list
		body = `{"$in":[{"$getField":"id"},[` + repeat(`{"$literal":"`+str[:min(strLen, 40)]+`"}`, width) + `]]}`
	case 3: // huge literal string
		body = `{"$contains":{"input":{"$getField":"inputs.q"},"substr":{"$literal":"` + str + `"}}}`
	case 4: // long and deep field path
		body = `{"$eq":[{"$getField":"` + strings.Repeat("a"+str[:min(strLen, 8)]+".", width) + `z"},{"$literal":1}]}`
	case 5: // big array literal
		body = `{"$eq":[{"$getField":"inputs.tags"},{"$literal":[` + repeat(`{"$literal":1}`, width) + `]}]}`
	case 6: // many $in lists under one $or
		in := `{"$in":[{"$getField":"a"},[` + repeat(`{"$literal":1}`, min(strLen, 1200)) + `]]}`
		body = `{"$or":[` + repeat(in, max(width%200, 1)) + `]}`
	}
	for range depth {
		body = `{"$not":[` + body + `]}`
	}
	return `{"$expr":` + body + `}`
}

// overLimits describes the first limit e exceeds, or "".
func overLimits(e Expr, l Limits) string {
	nodes := 0
	var msg string
	var lit func(v any)
	lit = func(v any) {
		switch x := v.(type) {
		case string:
			if len(x) > l.MaxStringBytes {
				msg = fmt.Sprintf("a %d-byte string", len(x))
			}
		case []any:
			nodes += len(x)
			for _, item := range x {
				lit(item)
			}
		case map[string]any:
			nodes += len(x)
			for k, item := range x {
				if len(k) > l.MaxStringBytes {
					msg = fmt.Sprintf("a %d-byte key", len(k))
				}
				lit(item)
			}
		}
	}
	Walk(e, func(n Expr) bool {
		nodes++
		switch x := n.(type) {
		case *And:
			if len(x.Operands) > l.MaxOperands {
				msg = fmt.Sprintf("$and of %d", len(x.Operands))
			}
		case *Or:
			if len(x.Operands) > l.MaxOperands {
				msg = fmt.Sprintf("$or of %d", len(x.Operands))
			}
		case *In:
			if len(x.List) > l.MaxInList {
				msg = fmt.Sprintf("$in of %d", len(x.List))
			}
		case *GetField:
			if len(x.Path) > l.MaxStringBytes || len(SplitPath(x.Path)) > l.MaxPathSegments {
				msg = fmt.Sprintf("path %.40q", x.Path)
			}
		case *Literal:
			lit(x.Value)
		}
		return true
	})
	if msg == "" && nodes > l.MaxNodes {
		msg = fmt.Sprintf("%d nodes", nodes)
	}
	return msg
}
