package digest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func FuzzDumps(f *testing.F) {
	var vectors []pyVector
	raw, err := readTestdata("pyjson_vectors.json")
	if err != nil {
		f.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		f.Fatal(err)
	}
	for _, v := range vectors {
		f.Add([]byte(v.Input))
	}
	f.Add([]byte(`{"a": [1, 2.5, "\ud83d\ude00", {"b": null}], "a": false}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		sorted, err := Dumps(in, Options{SortKeys: true})
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("error %v does not wrap ErrInvalidJSON", err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted input encoding/json rejects: %q", in)
		}
		for _, c := range sorted.Text {
			if c < 0x20 || c > 0x7e {
				t.Fatalf("non-printable byte %#x in output %q", c, sorted.Text)
			}
		}
		if !sorted.Finite {
			return // Infinity is not JSON, so the texts cannot be re-read
		}
		// Python's output is a fixed point of loads+dumps, and sorting the
		// insertion-order or compact text gives the sorted text.
		again, err := Canonical(sorted.Text)
		if err != nil || !bytes.Equal(again, sorted.Text) {
			t.Fatalf("canonical text is not stable:\n%s\n%s (%v)", sorted.Text, again, err)
		}
		for _, opts := range []Options{{}, {Compact: true}} {
			other, err := Dumps(in, opts)
			if err != nil {
				t.Fatalf("%+v dump failed where sorted succeeded: %v", opts, err)
			}
			resorted, err := Canonical(other.Text)
			if err != nil || !bytes.Equal(resorted, sorted.Text) {
				t.Fatalf("sorting the %+v text differs:\n%s\n%s (%v)", opts, sorted.Text, resorted, err)
			}
		}
	})
}
