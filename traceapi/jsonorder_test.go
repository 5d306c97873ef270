package traceapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeOrderedKeepsKeyOrder(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":{"z":[1,{"y":2,"x":3}],"c":null}}`, `{"b":1,"a":{"z":[1,{"y":2,"x":3}],"c":null}}`},
		{`{"n":1.50,"big":12345678901234567890}`, `{"n":1.50,"big":12345678901234567890}`},
		{`{"dup":1,"k":2,"dup":3}`, `{"dup":3,"k":2}`},
		{`[]`, `[]`},
		{`"s"`, `"s"`},
	}
	for _, tc := range tests {
		v, err := decodeOrdered([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		out, err := json.Marshal(v)
		if err != nil || string(out) != tc.want {
			t.Errorf("%s -> %s (%v), want %s", tc.in, out, err, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `[1,]`, `{} {}`, `{1:2}`} {
		if _, err := decodeOrdered([]byte(bad)); err == nil {
			t.Errorf("decodeOrdered(%q) succeeded", bad)
		}
	}
}

// FuzzDecodeOrdered: any valid JSON decodes and re-encodes to the same
// value; invalid input is an error, never a panic.
func FuzzDecodeOrdered(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `1e5`, `{"a":{"a":{"a":{}}}}`, `"\ud800"`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decodeOrdered(raw)
		if !json.Valid(raw) {
			return // reaching here without a panic is the check
		}
		if err != nil {
			t.Fatalf("valid %q: %v", raw, err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("re-encode %q: %v", raw, err)
		}
		if !reflect.DeepEqual(decodeStd(t, raw), decodeStd(t, out)) {
			t.Fatalf("%q re-encoded as %q", raw, out)
		}
	})
}

func decodeStd(t *testing.T, raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	return v
}
