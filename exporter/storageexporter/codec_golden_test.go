package storageexporter

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// goldenOps are the ops of testdata/record.bin: every field of a call
// set, and each kind of op.
func goldenOps() []storage.CallOp {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	end := at.Add(1500 * time.Millisecond)
	exc := "ValueError: boom"
	step, stepEnd := int64(3), int64(-4)
	return []storage.CallOp{
		{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
			ProjectID: "acme/app", ID: "c1", TraceID: "t1", ParentID: "p1", ThreadID: "th", TurnID: "tu", OpName: "weave:///acme/app/op/chat:v1",
			DisplayName: "chat", StartedAt: at, EndedAt: &end, Attributes: json.RawMessage(`{"a":1}`), Inputs: json.RawMessage(`{"q":"hi"}`),
			Output: json.RawMessage(`"ok"`), Summary: json.RawMessage(`{"usage":{}}`), OtelDump: json.RawMessage(`{"span":1}`), Exception: &exc,
			WBUserID: "u", WBRunID: "r", WBRunStep: &step, WBRunStepEnd: &stepEnd, InputRefs: []string{"weave:///a/b/object/x:1"}, OutputRefs: []string{},
		}}},
		{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "acme/app", ID: "c2", EndedAt: &end, DeletedAt: &at}}},
		{Update: &storage.CallUpdate{ProjectID: "acme/app", ID: "c1", DisplayName: "renamed", WBUserID: "u"}},
		{Delete: &storage.CallDelete{ProjectID: "acme/app", IDs: []string{"c1", "c2"}, WBUserID: "u", At: at}},
	}
}

// TestRecordFormatIsStable: a log written by this build reads as it did,
// byte for byte, and one written before reads back the same ops. The
// encoding follows storage.CallFields; reordering that table, or a field
// added without a new codecVersion, fails here.
func TestRecordFormatIsStable(t *testing.T) {
	golden, err := os.ReadFile("testdata/record.bin")
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeOps(nil, goldenOps()); !bytes.Equal(got, golden) {
		t.Fatalf("encoded record differs from testdata/record.bin:\n got %q\nwant %q", got, golden)
	}
	ops, err := decodeOps(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ops, goldenOps()) {
		t.Fatalf("decoded %+v\nwant %+v", ops, goldenOps())
	}
}

// BenchmarkRecordCodec encodes and decodes a record of 500 calls shaped
// like the golden ones, as the log does for every batch.
func BenchmarkRecordCodec(b *testing.B) {
	var ops []storage.CallOp
	for range 125 {
		ops = append(ops, goldenOps()...)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := encodeOps(nil, ops)
		if _, err := decodeOps(rec); err != nil {
			b.Fatal(err)
		}
	}
}
