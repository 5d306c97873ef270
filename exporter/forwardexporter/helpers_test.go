package forwardexporter

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// sampleOps is one of each kind of record, with optional fields set and
// unset, as the receivers produce them.
func sampleOps() []storage.CallOp {
	start := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
	end := start.Add(1500 * time.Millisecond)
	exc, step := "ValueError: boom", int64(3)
	return []storage.CallOp{
		{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "acme/chat", ID: "c1", TraceID: "t1",
			OpName: "weave:///acme/chat/op/chat:v1", DisplayName: "first", ParentID: "p0", ThreadID: "th", TurnID: "tu",
			StartedAt: start, Attributes: json.RawMessage(`{"a":1}`), Inputs: json.RawMessage(`{"q":"héllo"}`),
			WBRunID: "run", WBRunStep: &step}}},
		{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "acme/chat", ID: "c1",
			EndedAt: &end, Output: json.RawMessage(`{"answer":42}`), Summary: json.RawMessage(`{"usage":{}}`), Exception: &exc}}},
		{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{ProjectID: "acme/chat", ID: "c2", TraceID: "t2",
			OpName: "span", StartedAt: start, EndedAt: &end, Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`),
			Summary: json.RawMessage(`{}`), OtelDump: json.RawMessage(`{"name":"span"}`)}}},
		{Update: &storage.CallUpdate{ProjectID: "acme/chat", ID: "c1", DisplayName: "renamed"}},
		{Delete: &storage.CallDelete{ProjectID: "acme/chat", IDs: []string{"c2", "c2", "c3"}, At: end}},
	}
}

// completeCalls returns n complete call parts of project with ids
// prefix-0 ... and about payload bytes of input each.
func completeCalls(project, prefix string, n, payload int) []storage.CallOp {
	ops := make([]storage.CallOp, n)
	now := time.Now().UTC()
	end := now.Add(time.Millisecond)
	for i := range ops {
		in, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("%0*d", payload, i)})
		ops[i].Part = &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{ProjectID: project,
			ID: fmt.Sprintf("%s-%d", prefix, i), TraceID: prefix, OpName: "op", StartedAt: now, EndedAt: &end,
			Attributes: json.RawMessage(`{}`), Inputs: in, Summary: json.RawMessage(`{}`)}}
	}
	return ops
}

func testSettings(t *testing.T) telemetry.Settings {
	return telemetry.Settings{ID: component.NewID(Type()), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Metrics: telemetry.New()}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
