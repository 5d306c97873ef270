package refs

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"weave:///acme/demo/object/demo-config:L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykYc",
		"weave:///e/p/object/ds:abc/attr/rows/id/rowdigest",
		"weave:///e/p/object/o:v1/key/a%2Fb%20c/index/-2/key/%C3%BC",
		"weave:///e/p/table/404fb12b", "weave:///e/p/call/c1/attr/x",
		"weave-trace-internal:///UHJv/op/o:d", "wandb-artifact:///e/p/m:v1",
		"weave:///e/p/object/o:d/", "weave:///e/p/object/o:d/index/%2B1_0", "%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		// Printing is canonical: the printed form parses to the same ref
		// and prints identically.
		printed := r.String()
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("printed form %q of %q does not parse: %v", printed, s, err)
		}
		if !reflect.DeepEqual(again, r) || again.String() != printed {
			t.Fatalf("round trip changed %q: %+v vs %+v", s, r, again)
		}
		got := ExtractRefs(json.RawMessage(mustJSON(t, []string{s, printed})))
		if len(got) == 0 || got[len(got)-1] != printed {
			t.Fatalf("ExtractRefs missed canonical ref %q: %q", printed, got)
		}
	})
}

func FuzzExtractRefs(f *testing.F) {
	f.Add([]byte(`{"a": "weave:///e/p/object/o:d", "b": ["weave:\/\/\/e\/p\/table\/t"], "weave:///e/p/call/k": 1}`))
	f.Add([]byte(`["weave:///e/p/object/o:d/key/a%20b", "x`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, s := range ExtractRefs(raw) {
			r, err := Parse(s)
			if err != nil || r.String() != s {
				t.Fatalf("extracted %q which does not round-trip (%v)", s, err)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
