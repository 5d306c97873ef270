package kafkabase

import (
	"bytes"
	"errors"
	"testing"

	"github.com/weftdev/weft/storage"
)

// FuzzDecode feeds arbitrary record values to Decode: it must never panic,
// must fail only with ErrMalformed or ErrUnknownVersion (the dead-letter
// reasons), and whatever it accepts must re-encode to a value that
// decodes to the same op.
func FuzzDecode(f *testing.F) {
	for _, op := range []storage.CallOp{
		{Part: &storage.CallPart{Kind: storage.PartComplete, Call: fullCall()}},
		{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c", DisplayName: "n"}},
		{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"a"}}},
	} {
		v, err := Encode(op)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	f.Add([]byte(`{"v":2,"op":"start"}`))
	f.Add([]byte(`{"v":1,"op":"end","call":{"project_id":"e/p","id":"c","inputs":null,"ended_at":"2025-01-01T00:00:00+05:00"}}`))
	f.Add([]byte("\x00\x01garbage"))
	f.Fuzz(func(t *testing.T, value []byte) {
		op, err := Decode(value)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownVersion) {
				t.Fatalf("Decode error %v is neither ErrMalformed nor ErrUnknownVersion", err)
			}
			return
		}
		first, err := Encode(op)
		if err != nil {
			t.Fatalf("accepted op does not re-encode: %v (value %q)", err, value)
		}
		again, err := Decode(first)
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v (%s)", err, first)
		}
		second, err := Encode(again)
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable: %s vs %s (err %v)", first, second, err)
		}
		if Key(op) == "" {
			t.Fatalf("accepted op has no project key: %s", value)
		}
	})
}
