package storageexporter

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func sampleOps() []storage.CallOp {
	at := time.Date(2025, 1, 2, 3, 4, 5, 678901234, time.UTC)
	end := at.Add(time.Second)
	exc := "boom"
	step := int64(-7)
	return []storage.CallOp{
		{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
			ProjectID: "e/p", ID: "c1", TraceID: "t", ParentID: "p", ThreadID: "th", TurnID: "tu", OpName: "op", DisplayName: "d",
			StartedAt: at, EndedAt: &end, Attributes: json.RawMessage(`{"a":1}`), Inputs: json.RawMessage(`{}`),
			Output: json.RawMessage(`"héllo"`), Summary: json.RawMessage(`{"usage":{}}`), OtelDump: json.RawMessage(`{"span":1}`),
			Exception: &exc, WBUserID: "u", WBRunID: "r", WBRunStep: &step, InputRefs: []string{"weave:///e/p/object/x:1"}, OutputRefs: []string{},
		}}},
		{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: "c2", EndedAt: &end}}},
		{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: "c3", StartedAt: at, Output: json.RawMessage{}}}},
		{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c1", DisplayName: "new", WBUserID: "u"}},
		{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"c2", "c3"}, WBUserID: "u", At: at}},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for name, ops := range map[string][]storage.CallOp{
		"every kind": sampleOps(),
		"empty":      {},
		"one part":   sampleOps()[:1],
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeOps(encodeOps(nil, ops))
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) == 0 && len(got) == 0 {
				return
			}
			if !reflect.DeepEqual(got, ops) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, ops)
			}
		})
	}
}

func TestCodecRefusesCorruptRecords(t *testing.T) {
	good := encodeOps(nil, sampleOps())
	for name, rec := range map[string][]byte{
		"empty":         {},
		"wrong version": append([]byte{99}, good[1:]...),
		"cut short":     good[:len(good)/2],
		"trailing":      append(append([]byte(nil), good...), 0),
		"huge count":    {codecVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"bad op kind":   {codecVersion, 1, 42},
	} {
		if _, err := decodeOps(rec); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

// FuzzDecodeOps: any bytes decode to an error or to ops that encode back
// to the same bytes.
func FuzzDecodeOps(f *testing.F) {
	f.Add(encodeOps(nil, sampleOps()))
	f.Add([]byte{codecVersion, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		ops, err := decodeOps(rec)
		if err != nil {
			return
		}
		again, err := decodeOps(encodeOps(nil, ops))
		if err != nil || !reflect.DeepEqual(again, ops) {
			t.Fatalf("re-encoded record does not decode to the same ops: %v", err)
		}
	})
}

func TestSizeHintCoversTheRecord(t *testing.T) {
	ops := sampleOps()
	if got, hint := len(encodeOps(nil, ops)), sizeHint(ops); hint < got {
		t.Fatalf("size hint %d is below the encoded size %d: the buffer would grow", hint, got)
	}
}
