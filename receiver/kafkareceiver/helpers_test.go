package kafkareceiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/exporter/kafkaexporter"
	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/processor/batchprocessor"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

const testPartitions = kafkatest.Partitions

var discard = slog.New(slog.DiscardHandler)

func testConfig(brokers []string, name string) kafkabase.Config {
	return kafkatest.Config(brokers, name)
}

// startKafka starts a cluster and creates the topics through EnsureTopics.
func startKafka(t testing.TB, name string, opts ...kafkatest.Option) (*kafkatest.Cluster, kafkabase.Config) {
	t.Helper()
	c := kafkatest.Start(t, opts...)
	cfg := testConfig(c.Addrs(), name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := kafkabase.EnsureTopics(ctx, cfg, discard); err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

func openStore(t testing.TB) *duckdb.Store {
	t.Helper()
	s, err := duckdb.Open(context.Background(), t.TempDir(), discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newProducer(t testing.TB, cfg kafkabase.Config) *kafkaexporter.Producer {
	t.Helper()
	p, err := kafkaexporter.NewProducer(telemetry.NopSettings("kafka"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	return p
}

// running is a processor running in the background.
type running struct {
	*Receiver
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error         // Run's result, set before done is closed
}

// stop cancels the processor and waits for Run to return.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("Run: %v", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("processor did not stop within 30s")
	}
}

func startProcessor(t testing.TB, cfg kafkabase.Config, w storage.CallWriter) *running {
	t.Helper()
	p, err := NewReceiver(telemetry.NopSettings("kafka"), cfg, pipelineTo(t, w))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Receiver: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		r.err = p.Run(ctx)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// projectsCovering returns n project ids per partition, so keyed records
// reach every partition and every group member gets work.
func projectsCovering(partitions, n int) []string {
	counts := make([]int, partitions)
	parts := make([]int, partitions)
	for i := range parts {
		parts[i] = i
	}
	var out []string
	for i := 0; len(out) < partitions*n; i++ {
		id := fmt.Sprintf("acme/p%d", i)
		at := kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: []byte(id)}, parts...)
		if counts[at] < n {
			counts[at]++
			out = append(out, id)
		}
	}
	return out
}

var callStart = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func startOp(project, id string) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
		ProjectID: project, ID: id, TraceID: "t-" + id, OpName: "op", StartedAt: callStart,
		Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{"id":"` + id + `"}`)}}}
}

func endOp(project, id string) storage.CallOp {
	ended := callStart.Add(time.Second)
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{
		ProjectID: project, ID: id, EndedAt: &ended, Output: json.RawMessage(`"out-` + id + `"`), Summary: json.RawMessage(`{}`)}}}
}

// ledger records the calls whose both halves Kafka acknowledged.
type ledger struct {
	mu    sync.Mutex
	calls map[string][]string // project -> ids
	n     int
}

func newLedger() *ledger { return &ledger{calls: map[string][]string{}} }

func (l *ledger) add(project, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[project] = append(l.calls[project], id)
	l.n++
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// produceCalls sends each call's end before its start, in separate
// Submits (two records), from one goroutine per project, and records the
// calls Kafka acknowledged. It stops a project at its first error.
func produceCalls(ctx context.Context, p *kafkaexporter.Producer, projects []string, perProject int, prefix string, l *ledger) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(projects))
	for i, project := range projects {
		wg.Go(func() {
			for n := range perProject {
				id := fmt.Sprintf("%s-%d", prefix, n)
				if _, err := p.ConsumeCalls(ctx, []storage.CallOp{endOp(project, id)}); err != nil {
					errs[i] = err
					return
				}
				if _, err := p.ConsumeCalls(ctx, []storage.CallOp{startOp(project, id)}); err != nil {
					errs[i] = err
					return
				}
				l.add(project, id)
			}
		})
	}
	wg.Wait()
	return errs
}

// storedCalls reads every visible call of the project through the reader.
func storedCalls(t testing.TB, r storage.CallReader, project string) []storage.StoredCall {
	t.Helper()
	var out []storage.StoredCall
	for c, err := range r.QueryCalls(context.Background(), storage.CallsQuery{ProjectID: project}) {
		if err != nil {
			t.Fatalf("QueryCalls: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// waitLanded waits (bounded) until every acknowledged call is visible and
// complete, then checks each landed exactly once with both halves intact
// and nothing else was stored.
func waitLanded(t testing.TB, r storage.CallReader, l *ledger) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Acknowledged means in Kafka: the processor applies the ops after,
	// so the wait lasts until the store holds exactly the ledger's calls,
	// complete (a delete acknowledged last has removed its calls too).
	waitFor(t, 60*time.Second, "every acknowledged call to land complete", func() bool {
		for project, ids := range l.calls {
			done := 0
			for _, c := range storedCalls(t, r, project) {
				if c.EndedAt != nil {
					done++
				}
			}
			if done != len(ids) {
				return false
			}
		}
		return true
	})
	for project, ids := range l.calls {
		checkExactlyOnce(t, storedCalls(t, r, project), project, ids)
	}
}

func checkExactlyOnce(t testing.TB, stored []storage.StoredCall, project string, ids []string) {
	t.Helper()
	rows := map[string]int{}
	for _, c := range stored {
		rows[c.ID]++
		if c.StartedAt.IsZero() || c.EndedAt == nil || string(c.Output) != `"out-`+c.ID+`"` || !strings.Contains(string(c.Inputs), c.ID) {
			t.Errorf("%s/%s incomplete: started %v ended %v output %s inputs %s", project, c.ID, c.StartedAt, c.EndedAt, c.Output, c.Inputs)
		}
	}
	for _, id := range ids {
		if rows[id] != 1 {
			t.Errorf("%s/%s stored %d times, want exactly once", project, id, rows[id])
		}
	}
	if len(rows) != len(ids) {
		t.Errorf("%s: %d distinct calls stored, %d acknowledged", project, len(rows), len(ids))
	}
}

// waitFor polls cond until it holds or the bound passes.
func waitFor(t testing.TB, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", bound, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pipelineTo is the process role's path to a store: the batch processor
// (which merges parts) in front of a storage exporter writing directly.
func pipelineTo(t testing.TB, w storage.CallWriter) consumer.Calls {
	t.Helper()
	ctx := context.Background()
	exp, err := storageexporter.New(telemetry.NopSettings("storage"), storageexporter.Config{}, w, "test")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := batchprocessor.New(telemetry.NopSettings("batch"), batchprocessor.DefaultConfig(), exp)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(exp.Start(ctx, nil), proc.Start(ctx, nil)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = errors.Join(proc.Shutdown(ctx), exp.Shutdown(ctx)) })
	return proc
}
