package kafkareceiver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/exporter/kafkaexporter"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
	"github.com/weftdev/weft/storage"
)

const (
	benchPartitions = 8
	benchProducers  = 8
	benchBatch      = 50 // ops per Submit, like an SDK's upsert batch
)

// lagWriter records, for every call stored the first time, the time from
// its Submit (carried in StartedAt) to the end of the storage commit.
type lagWriter struct {
	storage.CallWriter
	mu     sync.Mutex
	seen   map[string]bool
	lags   []time.Duration
	stored atomic.Int64
}

func (w *lagWriter) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	res, err := w.CallWriter.WriteCallOps(ctx, ops)
	if err != nil {
		return res, err
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, op := range ops {
		if op.Part == nil || w.seen[op.Part.Call.ID] {
			continue
		}
		w.seen[op.Part.Call.ID] = true
		w.lags = append(w.lags, now.Sub(op.Part.Call.StartedAt))
		w.stored.Add(1)
	}
	return res, nil
}

func (w *lagWriter) quantile(q float64) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := slices.Clone(w.lags)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkProduceConsume measures the scale-out path end to end: ~1 KB
// complete calls submitted by 8 goroutines through the Producer (acks=all),
// consumed by 1 or 2 Processors in one group, written to DuckDB. Lag is
// from Submit to the storage commit. Run with a fixed count, e.g.
// go test -run XXX -bench ProduceConsume -benchtime 50000x ./receiver/kafkareceiver/
func BenchmarkProduceConsume(b *testing.B) {
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("processors=%d", procs), func(b *testing.B) { benchProduceConsume(b, procs) })
	}
}

func benchProduceConsume(b *testing.B, procs int) {
	c := kafkatest.Start(b)
	cfg := testConfig(c.Addrs(), "bench")
	cfg.Partitions = benchPartitions
	cfg.Consumer.MaxBatchOps, cfg.Consumer.BatchLinger = kafkabase.DefaultConfig().Consumer.MaxBatchOps, kafkabase.DefaultConfig().Consumer.BatchLinger
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := kafkabase.EnsureTopics(ctx, cfg, discard); err != nil {
		b.Fatal(err)
	}
	w := &lagWriter{CallWriter: openStore(b), seen: map[string]bool{}}
	projects := projectsCovering(benchPartitions, 2)
	prod := newProducer(b, cfg)
	warmUp(ctx, b, prod, projects, w, startProcessors(b, cfg, w, procs))

	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchProducers {
		wg.Go(func() { submitUntil(ctx, b, prod, projects, &next, int64(b.N)) })
	}
	wg.Wait()
	waitFor(b, 5*time.Minute, "every benchmark call to be stored", func() bool { return w.stored.Load() >= int64(b.N) })
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(w.quantile(0.5).Microseconds())/1000, "p50-lag-ms")
	b.ReportMetric(float64(w.quantile(0.99).Microseconds())/1000, "p99-lag-ms")
}

func startProcessors(b *testing.B, cfg kafkabase.Config, w storage.CallWriter, n int) []*running {
	var out []*running
	for range n {
		out = append(out, startProcessor(b, cfg, w))
	}
	return out
}

// warmUp sends calls until every processor has handled some, so the group
// is formed and the partitions are spread before the clock starts.
func warmUp(ctx context.Context, b *testing.B, prod *kafkaexporter.Producer, projects []string, w *lagWriter, procs []*running) {
	sent := 0
	waitFor(b, time.Minute, "every processor to receive work", func() bool {
		busy := 0
		for _, p := range procs {
			if p.Stats().Records > 0 {
				busy++
			}
		}
		if busy == len(procs) {
			return true
		}
		for _, project := range projects {
			if _, err := prod.ConsumeCalls(ctx, []storage.CallOp{benchOp(project, fmt.Sprintf("warm-%d", sent))}); err != nil {
				b.Fatal(err)
			}
			sent++
		}
		return false
	})
	waitFor(b, time.Minute, "the warm-up calls to be stored", func() bool { return w.stored.Load() >= int64(sent) })
	w.mu.Lock()
	w.lags = w.lags[:0]
	w.stored.Store(0)
	w.mu.Unlock()
}

// submitUntil claims batches of call numbers until total, each batch for
// the next project in turn so every partition gets load.
func submitUntil(ctx context.Context, b *testing.B, prod *kafkaexporter.Producer, projects []string, next *atomic.Int64, total int64) {
	for {
		first := next.Add(benchBatch) - benchBatch
		if first >= total {
			return
		}
		project := projects[(first/benchBatch)%int64(len(projects))]
		ops := make([]storage.CallOp, 0, benchBatch)
		for i := first; i < min(first+benchBatch, total); i++ {
			ops = append(ops, benchOp(project, fmt.Sprintf("b-%d", i)))
		}
		if _, err := prod.ConsumeCalls(ctx, ops); err != nil {
			b.Error(err)
			return
		}
	}
}

var benchInputs = json.RawMessage(`{"messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 70) + `"}]}`)

func benchOp(project, id string) storage.CallOp {
	now := time.Now()
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
		ProjectID: project, ID: id, TraceID: "t-" + id, OpName: "openai.chat.completions.create",
		StartedAt: now, EndedAt: &now, Attributes: json.RawMessage(`{}`), Inputs: benchInputs,
		Output:  json.RawMessage(`{"choices":[{"message":{"content":"ok"}}]}`),
		Summary: json.RawMessage(`{"usage":{"gpt-4o":{"prompt_tokens":120,"completion_tokens":30}}}`)}}}
}

// BenchmarkEncodeDecode measures the record codec on a ~1 KB call.
func BenchmarkEncodeDecode(b *testing.B) {
	op := benchOp("acme/chat", "019a2b3c")
	value, err := kafkabase.Encode(op)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(value)))
		for b.Loop() {
			if _, err := kafkabase.Encode(op); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(value)))
		for b.Loop() {
			if _, err := kafkabase.Decode(value); err != nil {
				b.Fatal(err)
			}
		}
	})
}
