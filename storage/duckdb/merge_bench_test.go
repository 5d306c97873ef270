package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// BenchmarkMergeEnds measures what a center storing an agent's backlog
// spends on calls that arrive in two parts: each iteration writes the
// starts of one batch of calls (inputs of ~1 KB of distinct text) and the
// ends of the batch before, into a store that already holds
// WEFT_BENCH_BASE (default 200k) OTLP calls with their raw spans. It
// reports the milliseconds per batch of ends merged into stored rows and
// per checkpoint (every five batches, as the server's calls are unlogged
// and checkpointed).
func BenchmarkMergeEnds(b *testing.B) {
	ctx := context.Background()
	s, err := OpenWithOptions(ctx, b.TempDir(), Options{CallsUnlogged: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	base := 200_000
	if n, err := strconv.Atoi(os.Getenv("WEFT_BENCH_BASE")); err == nil && n >= 0 {
		base = n
	}
	const batch = 2000
	gen := newOTelBenchGen()
	for n := 0; n*10_000 < base; n++ {
		if _, err := s.WriteCallOps(ctx, gen.batch(n, 10_000, time.Now().UTC())); err != nil {
			b.Fatal(err)
		}
	}
	id := func(n, i int) string { return fmt.Sprintf("019a%04x-%04x-7000-8000-%012x", n, i, n*batch+i) }
	starts := func(n int, at time.Time) []storage.CallOp {
		ops := make([]storage.CallOp, batch)
		for i := range ops {
			in := json.RawMessage(`{"prompt":"` + sentence(gen.rng, gen.words, 1000) + `"}`)
			ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
				ProjectID: "bench/weave", ID: id(n, i), TraceID: id(n, 0), OpName: "weave:///bench/weave/op/chat:v1",
				StartedAt: at, Attributes: json.RawMessage(`{"weave":{"client_version":"0.52.0"}}`), Inputs: in}}}
		}
		return ops
	}
	ends := func(n int, at time.Time) []storage.CallOp {
		ops := make([]storage.CallOp, batch)
		for i := range ops {
			out := json.RawMessage(`{"text":"` + sentence(gen.rng, gen.words, 300) + `"}`)
			ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{
				ProjectID: "bench/weave", ID: id(n, i), EndedAt: &at, Output: out, Summary: gen.summary}}}
		}
		return ops
	}
	if err := s.CheckpointCalls(ctx); err != nil {
		b.Fatal(err)
	}
	var merging, checkpoints time.Duration
	b.ResetTimer()
	for n := range b.N {
		now := time.Now().UTC()
		if _, err := s.WriteCallOps(ctx, starts(n, now)); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			continue
		}
		begin := time.Now()
		if _, err := s.WriteCallOps(ctx, ends(n-1, now)); err != nil {
			b.Fatal(err)
		}
		merging += time.Since(begin)
		if n%5 == 0 { // as the server checkpoints: every ~10k calls stored
			begin = time.Now()
			if err := s.CheckpointCalls(ctx); err != nil {
				b.Fatal(err)
			}
			checkpoints += time.Since(begin)
		}
	}
	b.StopTimer()
	if b.N > 1 {
		b.ReportMetric(float64(merging.Milliseconds())/float64(b.N-1), "ms/end-batch")
		b.ReportMetric(float64(checkpoints.Milliseconds())/float64(b.N/5), "ms/checkpoint")
	}
}
