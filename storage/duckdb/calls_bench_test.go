package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// BenchmarkWriteCallOps measures the storage side of ingest: one
// transaction of 1000 complete calls (each a merged start and end) into a
// growing table.
func BenchmarkWriteCallOps(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	inputs := json.RawMessage(`{"prompt":"` + strings.Repeat("x", 220) + `"}`)
	output := json.RawMessage(`{"text":"` + strings.Repeat("y", 220) + `"}`)
	b.ResetTimer()
	for n := range b.N {
		ops := make([]storage.CallOp, 1000)
		now := time.Now().UTC()
		for i := range ops {
			ended := now.Add(time.Millisecond)
			ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
				ProjectID: "e/p", ID: fmt.Sprintf("%08d-%04d", n, i), TraceID: "t", OpName: "weave:///e/p/op/chat:v1",
				StartedAt: now, EndedAt: &ended, Attributes: json.RawMessage(`{}`), Inputs: inputs, Output: output,
				Summary: json.RawMessage(`{}`)}}}
		}
		if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "calls/s")
}
