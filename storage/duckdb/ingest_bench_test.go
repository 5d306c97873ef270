package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// BenchmarkIngestOTelSpans measures the store's side of sustained OTLP
// ingest: transactions of 50k OTel-like calls (~1 KB of mapped payload and
// a ~1.5 KB raw span each) into a table that grows by every transaction,
// as the storage exporter's applier writes them. It reports the rate over
// the whole run and over its last quarter, which is what a store holding
// millions of rows sustains. -benchtime 40x writes 2M calls.
func BenchmarkIngestOTelSpans(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(context.Background(), dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := benchBatch()
	gen := newOTelBenchGen()
	var lastQuarter time.Duration
	b.ResetTimer()
	for n := range b.N {
		ops := gen.batch(n, batch, time.Now().UTC())
		begin := time.Now()
		if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
		if n >= b.N*3/4 {
			lastQuarter += time.Since(begin)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "calls/s")
	if _, err := s.db.Exec("CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, CallsFileName)); err == nil {
		b.ReportMetric(float64(st.Size())/float64(b.N*batch), "disk-B/call")
	}
	if q := b.N - b.N*3/4; lastQuarter > 0 {
		b.ReportMetric(float64(q*batch)/lastQuarter.Seconds(), "calls/s-last-quarter")
	}
}

// otelBenchGen makes OTel-like calls with distinct text: ~1 KB of mapped
// payload and a ~1.5 KB raw span each, 50 calls to a trace. Batch n's
// call ids and trace ids can be recomputed by the read benchmarks.
type otelBenchGen struct {
	rng            *rand.Rand
	words          []string
	attrs, summary json.RawMessage
}

func newOTelBenchGen() *otelBenchGen {
	return &otelBenchGen{
		rng: rand.New(rand.NewPCG(1, 2)), words: benchWords(),
		attrs:   json.RawMessage(`{"gen_ai":{"request":{"model":"gpt-4o"},"usage":{"input_tokens":120,"output_tokens":48}},"otel_span":{"kind":"SPAN_KIND_INTERNAL"}}`),
		summary: json.RawMessage(`{"usage":{"gpt-4o":{"input_tokens":120,"output_tokens":48,"requests":1}}}`),
	}
}

// benchCallID and benchTraceID name call i of batch n and its trace. They
// are as random as OTel's span and trace ids (mix64 is a bijection, so
// they stay unique): ids that grow with time would let DuckDB's zone maps
// find a call without the locator and flatter the point-read figures.
func benchCallID(n, i int) string { return fmt.Sprintf("%016x", mix64(uint64(n)<<32|uint64(i))) }
func benchTraceID(n, i, batch int) string {
	return fmt.Sprintf("%016x%016x", mix64(uint64(n*batch+i/50)), 0x7e57)
}

// batch makes batch n of size calls, started at now.
func (g *otelBenchGen) batch(n, size int, now time.Time) []storage.CallOp {
	ops := make([]storage.CallOp, size)
	ended := now.Add(420 * time.Millisecond)
	for i := range ops {
		in, out := sentence(g.rng, g.words, 300), sentence(g.rng, g.words, 300)
		// As the OTLP mapper writes them: the messages once as inputs and
		// output, and again inside the raw span.
		inMsgs := `[{"role":"user","content":"` + in + `"}]`
		outMsgs := `[{"role":"assistant","content":"` + out + `"}]`
		inputs := json.RawMessage(`{"gen_ai.input.messages":` + inMsgs + `}`)
		output := json.RawMessage(`{"gen_ai.output.messages":` + outMsgs + `}`)
		dump := json.RawMessage(`{"name":"chat gpt-4o","attributes":{"gen_ai":{"input":{"messages":` + inMsgs +
			`},"output":{"messages":` + outMsgs + `}}}}`)
		ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
			ProjectID: "bench/otel", ID: benchCallID(n, i), TraceID: benchTraceID(n, i, size),
			ParentID: "a1b2c3d4e5f60718", OpName: "chat gpt-4o", StartedAt: now, EndedAt: &ended,
			Attributes: g.attrs, Inputs: inputs, Output: output, Summary: g.summary, OtelDump: dump}}}
	}
	return ops
}

// benchWords is a vocabulary of 2000 made-up words, so that every call's
// text differs as real prompts do (identical text would compress to
// nothing and flatter the store).
func benchWords() []string {
	rng := rand.New(rand.NewPCG(7, 7))
	words := make([]string, 2000)
	for i := range words {
		b := make([]byte, 2+rng.IntN(9))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(b)
	}
	return words
}

// sentence joins random words up to about n bytes.
func sentence(rng *rand.Rand, words []string, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(words[rng.IntN(len(words))])
		sb.WriteByte(' ')
	}
	return sb.String()
}

// benchBatch is the calls per transaction: 50k, or WEFT_BENCH_BATCH.
func benchBatch() int {
	if n, err := strconv.Atoi(os.Getenv("WEFT_BENCH_BATCH")); err == nil && n > 0 {
		return n
	}
	return 50_000
}
