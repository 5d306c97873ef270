package kafkabase

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/conformance"
)

func fullCall() storage.Call {
	started := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
	ended := started.Add(1500 * time.Millisecond)
	exc := "ValueError: <bad> & worse"
	step, stepEnd := int64(3), int64(4)
	return storage.Call{
		ProjectID: "acme/chat", ID: "019a-call", TraceID: "t1", ParentID: "p1", ThreadID: "th", TurnID: "tu",
		OpName: "weave:///acme/chat/op/generate:abc", DisplayName: "generate",
		StartedAt: started, EndedAt: &ended,
		Attributes: json.RawMessage(`{"weave":{"client_version":"0.51"}}`),
		Inputs:     json.RawMessage(`{"prompt":"<b>hi</b> & bye","n":[1,2.5,null]}`),
		Output:     json.RawMessage(`"done"`), Summary: json.RawMessage(`{"usage":{"gpt-4o":{"requests":1}}}`),
		OtelDump:  json.RawMessage(`{"name":"span"}`),
		Exception: &exc, WBUserID: "u1", WBRunID: "r1", WBRunStep: &step, WBRunStepEnd: &stepEnd,
		InputRefs: []string{"weave:///acme/chat/object/a:1"}, OutputRefs: []string{"weave:///acme/chat/object/b:2"},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	c := fullCall()
	startOnly := storage.Call{ProjectID: "e/p", ID: "s", OpName: "op", StartedAt: c.StartedAt}
	endOnly := storage.Call{ProjectID: "e/p", ID: "s", EndedAt: c.EndedAt, Output: json.RawMessage(`null`)}
	tests := []struct {
		name string
		op   storage.CallOp
	}{
		{"complete", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}}},
		{"start", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: startOnly}}},
		{"end", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: endOnly}}},
		{"update", storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c", DisplayName: "x", WBUserID: "u"}}},
		{"update clears name", storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c"}}},
		{"delete", storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"a", "b"}, WBUserID: "u", At: c.StartedAt}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			value, err := Encode(tc.op)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(value)
			if err != nil {
				t.Fatalf("Decode(%s): %v", value, err)
			}
			if !reflect.DeepEqual(got, tc.op) {
				t.Fatalf("round trip changed the op:\n got %+v\nwant %+v\nvalue %s", got, tc.op, value)
			}
		})
	}
}

func TestEncodeKeepsUserJSONUnescaped(t *testing.T) {
	op := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: fullCall()}}
	value, err := Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(value), `"prompt":"<b>hi</b> & bye"`) {
		t.Fatalf("user JSON was rewritten: %s", value)
	}
	if Key(op) != "acme/chat" {
		t.Fatalf("key = %q, want the project id", Key(op))
	}
}

// TestDecodeVersion1Fixture pins the v1 format: records written by any
// earlier release stay readable (ADR 0006).
func TestDecodeVersion1Fixture(t *testing.T) {
	const v1 = `{"v":1,"op":"end","call":{"project_id":"e/p","id":"c1","ended_at":"2025-03-04T05:06:08.5Z",` +
		`"output":{"answer":42},"summary":{},"exception":"boom","wb_run_step_end":7,"output_refs":["weave:///e/p/object/o:d"]},"added_later":true}`
	op, err := Decode([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	p := op.Part
	ended := time.Date(2025, 3, 4, 5, 6, 8, 500_000_000, time.UTC)
	switch {
	case p == nil || p.Kind != storage.PartEnd:
		t.Fatalf("want an end part, got %+v", op)
	case p.Call.ProjectID != "e/p" || p.Call.ID != "c1" || !p.Call.EndedAt.Equal(ended):
		t.Fatalf("identity or time wrong: %+v", p.Call)
	case string(p.Call.Output) != `{"answer":42}` || *p.Call.Exception != "boom" || *p.Call.WBRunStepEnd != 7:
		t.Fatalf("end fields wrong: %+v", p.Call)
	case len(p.Call.OutputRefs) != 1 || !p.Call.StartedAt.IsZero():
		t.Fatalf("refs or start side wrong: %+v", p.Call)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  error
	}{
		{"empty", ``, ErrMalformed},
		{"garbage", "\x00\xffnot json", ErrMalformed},
		{"null", `null`, ErrMalformed},
		{"array", `[1]`, ErrMalformed},
		{"no version", `{"op":"start","call":{"project_id":"e/p","id":"c"}}`, ErrMalformed},
		{"version as string", `{"v":"1","op":"start","call":{"project_id":"e/p","id":"c"}}`, ErrMalformed},
		{"future version", `{"v":2,"op":"start","call":{"project_id":"e/p","id":"c"}}`, ErrUnknownVersion},
		{"future version new shape", `{"v":3,"op":"start","call":"compressed"}`, ErrUnknownVersion},
		{"unknown op", `{"v":1,"op":"merge","call":{"project_id":"e/p","id":"c"}}`, ErrMalformed},
		{"no body", `{"v":1,"op":"start"}`, ErrMalformed},
		{"two bodies", `{"v":1,"op":"update","update":{"project_id":"e/p","id":"c"},"delete":{"project_id":"e/p","ids":[]}}`, ErrMalformed},
		{"body of other op", `{"v":1,"op":"start","update":{"project_id":"e/p","id":"c"}}`, ErrMalformed},
		{"no project", `{"v":1,"op":"start","call":{"id":"c"}}`, ErrMalformed},
		{"no call id", `{"v":1,"op":"complete","call":{"project_id":"e/p"}}`, ErrMalformed},
		{"update without id", `{"v":1,"op":"update","update":{"project_id":"e/p"}}`, ErrMalformed},
		{"delete without project", `{"v":1,"op":"delete","delete":{"ids":["a"]}}`, ErrMalformed},
		{"bad time", `{"v":1,"op":"start","call":{"project_id":"e/p","id":"c","started_at":"yesterday"}}`, ErrMalformed},
		{"trailing data", `{"v":1,"op":"start","call":{"project_id":"e/p","id":"c"}} {}`, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, err := Decode([]byte(tc.value))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode(%q) = %+v, %v; want %v", tc.value, op, err, tc.want)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	part := &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: "c"}}
	tests := []struct {
		name string
		op   storage.CallOp
	}{
		{"no body", storage.CallOp{}},
		{"two bodies", storage.CallOp{Part: part, Update: &storage.CallUpdate{ProjectID: "e/p", ID: "c"}}},
		{"unknown kind", storage.CallOp{Part: &storage.CallPart{Kind: 7, Call: part.Call}}},
		{"part without project", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ID: "c"}}}},
		{"part without id", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p"}}}},
		{"update without id", storage.CallOp{Update: &storage.CallUpdate{ProjectID: "e/p"}}},
		{"delete without project", storage.CallOp{Delete: &storage.CallDelete{IDs: []string{"a"}}}},
		{"invalid JSON", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart,
			Call: storage.Call{ProjectID: "e/p", ID: "c", Inputs: json.RawMessage(`{"a":`)}}}},
		{"year out of range", storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart,
			Call: storage.Call{ProjectID: "e/p", ID: "c", StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Encode(tc.op); !errors.Is(err, storage.ErrInvalidArgument) {
				t.Fatalf("Encode = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// TestEveryCallFieldCrossesTheWire: each field of storage.CallFields
// survives the wire, so a field added to the call and not to wireCall
// fails here.
func TestEveryCallFieldCrossesTheWire(t *testing.T) {
	c := conformance.EveryField("e/p", "c", "w", storage.SideStart, storage.SideEnd, storage.SideDelete)
	op := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}}
	value, err := Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(value)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range storage.CallFields {
		if !storage.SameFieldValue(f.Of(&got.Part.Call), f.Of(&c)) {
			t.Errorf("%s did not cross the wire: %s", f.Column, value)
		}
	}
}
