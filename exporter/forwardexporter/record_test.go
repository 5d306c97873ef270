package forwardexporter

import (
	"bytes"
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
			key, l, err := decodeRecord(encodeRecord(tc.key, tc.ops))
			if err != nil {
				t.Fatal(err)
			}
			if key != tc.key || l.isOTLP() || !reflect.DeepEqual(l.ops, tc.ops) {
				t.Fatalf("round trip changed the record:\nkey %q want %q\nops %+v\nwant %+v", key, tc.key, l.ops, tc.ops)
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
		{"unknown kind", append([]byte{recordVersion, 7}, good[2:]...)},
		{"key longer than the record", []byte{recordVersion, kindCalls, 0x7f, 'k'}},
		{"cut short", good[:len(good)/2]},
		{"no calls", []byte{recordVersion, kindCalls, 0}},
		{"OTLP body not compressed", append(recordHead(kindOTLP, "k"), 0, 1, 0xff, 0xff, 0xff)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := decodeRecord(tc.rec); !errors.Is(err, errCorrupt) {
				t.Fatalf("decodeRecord = %v, want errCorrupt", err)
			}
		})
	}
}

func TestOTLPRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name, key, project string
		spans              int
		request            []byte
	}{
		{"with a project header", "weft-k", "acme/app", 3, []byte("\x0a\x03abc")},
		{"resource projects", "k", "", 1, []byte{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, l, err := decodeRecord(encodeOTLPRecord(tc.key, tc.project, tc.spans, tc.request))
			if err != nil {
				t.Fatal(err)
			}
			if key != tc.key || l.project != tc.project || l.records() != tc.spans || !bytes.Equal(l.otlp[0], tc.request) {
				t.Fatalf("round trip changed the record: %q %q %d %q", key, l.project, l.records(), l.otlp)
			}
		})
	}
}

// FuzzDecodeRecord: any bytes decode or fail cleanly, and what decodes
// encodes back to a record that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord("weft-key", sampleOps()))
	f.Add(encodeRecord("", completeCalls("a/b", "x", 3, 10)))
	f.Add(encodeOTLPRecord("k", "a/b", 2, []byte("\x0a\x00")))
	f.Add([]byte{recordVersion, kindCalls, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, rec []byte) {
		key, l, err := decodeRecord(rec)
		if err != nil {
			return
		}
		again := encodeRecord(key, l.ops)
		if l.isOTLP() {
			again = encodeOTLPRecord(key, l.project, l.spans[0], l.otlp[0])
		}
		key2, l2, err := decodeRecord(again)
		if err != nil || key2 != key || !reflect.DeepEqual(l2, l) {
			t.Fatalf("re-encoded record differs: %v", err)
		}
	})
}
