package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// benchCall is a complete call of about 1 KB, as OTLP spans arrive.
func benchCall(project string, i int) storage.CallOp {
	end := t0.Add(time.Duration(i)*time.Millisecond + 250*time.Millisecond)
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
		ProjectID: project, ID: fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), TraceID: fmt.Sprintf("trace-%d", i/10),
		OpName: fmt.Sprintf("weave:///e/p/op/op%d:v1", i%20), StartedAt: t0.Add(time.Duration(i) * time.Millisecond), EndedAt: &end,
		Attributes: json.RawMessage(`{"weave":{"client_version":"0.51.0","source":"python-sdk","os":"linux"}}`),
		Inputs:     json.RawMessage(fmt.Sprintf(`{"model":"gpt-4o","messages":[{"role":"user","content":"question number %d, padded %0400d"}]}`, i, i)),
		Output:     json.RawMessage(fmt.Sprintf(`{"content":"answer %d, padded %0300d"}`, i, i)),
		Summary:    json.RawMessage(`{"usage":{"gpt-4o":{"prompt_tokens":120,"completion_tokens":80,"requests":1}}}`)}}}
}

func benchStore(b testing.TB, calls int) *Store {
	b.Helper()
	s := openTestStoreTB(b, Options{})
	const batch = 5000
	for start := 0; start < calls; start += batch {
		ops := make([]storage.CallOp, 0, batch)
		for i := start; i < min(start+batch, calls); i++ {
			ops = append(ops, benchCall("e/p", i))
		}
		if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkWriteNewCalls writes batches of 1000 new complete calls.
func BenchmarkWriteNewCalls(b *testing.B) {
	s := openTestStoreTB(b, Options{})
	n := 0
	for b.Loop() {
		ops := make([]storage.CallOp, 1000)
		for i := range ops {
			ops[i] = benchCall("e/p", n)
			n++
		}
		if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkQueryFirstPage pages 100 calls of one op out of 100k.
func BenchmarkQueryFirstPage(b *testing.B) {
	s := benchStore(b, 100_000)
	q := storage.CallsQuery{ProjectID: "e/p", Limit: 100, Filter: storage.CallsFilter{OpNames: []string{"weave:///e/p/op/op7:v1"}}}
	for b.Loop() {
		n := 0
		for _, err := range s.QueryCalls(context.Background(), q) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 100 {
			b.Fatalf("%d calls", n)
		}
	}
}

// BenchmarkCountCalls counts the 100k calls.
func BenchmarkCountCalls(b *testing.B) {
	s := benchStore(b, 100_000)
	for b.Loop() {
		st, err := s.CountCalls(context.Background(), storage.CallsQuery{ProjectID: "e/p"}, 0)
		if err != nil || st.Count != 100_000 {
			b.Fatal(st, err)
		}
	}
}

// BenchmarkReadOneCall reads one call by id out of 100k, as /call/read
// does.
func BenchmarkReadOneCall(b *testing.B) {
	s := benchStore(b, 100_000)
	id := benchCall("e/p", 54321).Part.Call.ID
	q := storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{id}}}
	for b.Loop() {
		n := 0
		for _, err := range s.QueryCalls(context.Background(), q) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1 {
			b.Fatalf("%d calls", n)
		}
	}
}
