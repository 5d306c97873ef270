package querylang

import (
	"encoding/json"
	"errors"
	"reflect"
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
