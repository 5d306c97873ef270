package forwardexporter

import (
	"errors"
	"reflect"
	"testing"

	"github.com/weftdev/weft/storage"
)

func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		key  string
		ops  []storage.CallOp
	}{
		{"every kind of record", "weft-abc", sampleOps()},
		{"no key", "", sampleOps()[:1]},
		{"many calls", "k", completeCalls("acme/x", "b", 100, 50)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, ops, err := decodeRecord(encodeRecord(tc.key, tc.ops))
			if err != nil {
				t.Fatal(err)
			}
			if key != tc.key || !reflect.DeepEqual(ops, tc.ops) {
				t.Fatalf("round trip changed the record:\nkey %q want %q\nops %+v\nwant %+v", key, tc.key, ops, tc.ops)
			}
		})
	}
}

func TestDecodeRecordRefusesDamage(t *testing.T) {
	good := encodeRecord("key", sampleOps())
	cases := []struct {
		name string
		rec  []byte
	}{
		{"empty", nil},
		{"unknown version", append([]byte{9}, good[1:]...)},
		{"key longer than the record", []byte{recordVersion, 0x7f, 'k'}},
		{"cut short", good[:len(good)/2]},
		{"no calls", []byte{recordVersion, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := decodeRecord(tc.rec); !errors.Is(err, errCorrupt) {
				t.Fatalf("decodeRecord = %v, want errCorrupt", err)
			}
		})
	}
}

// FuzzDecodeRecord: any bytes decode or fail cleanly, and what decodes
// encodes back to a record that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord("weft-key", sampleOps()))
	f.Add(encodeRecord("", completeCalls("a/b", "x", 3, 10)))
	f.Add([]byte{recordVersion, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, rec []byte) {
		key, ops, err := decodeRecord(rec)
		if err != nil {
			return
		}
		key2, ops2, err := decodeRecord(encodeRecord(key, ops))
		if err != nil || key2 != key || !reflect.DeepEqual(ops2, ops) {
			t.Fatalf("re-encoded record differs: %v", err)
		}
	})
}
