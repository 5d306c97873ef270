package kafkareceiver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

func TestEveryAcknowledgedCallLandsOnceAndComplete(t *testing.T) {
	_, cfg := startKafka(t, "calls-e2e")
	store := openStore(t)
	proc := startProcessor(t, cfg, store)
	prod := newProducer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	l := newLedger()
	projects := projectsCovering(testPartitions, 2)
	for _, err := range produceCalls(ctx, prod, projects, 60, "c", l) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Updates and deletes are ordered after the parts of their project.
	renamed, gone := projects[0], projects[1]
	if _, err := prod.ConsumeCalls(ctx, []storage.CallOp{{Update: &storage.CallUpdate{ProjectID: renamed, ID: "c-0", DisplayName: "renamed"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := prod.ConsumeCalls(ctx, []storage.CallOp{{Delete: &storage.CallDelete{ProjectID: gone, IDs: []string{"c-1", "c-1", "c-2"}, At: callStart}}})
	if err != nil || res[0].NumDeleted != 2 {
		t.Fatalf("delete: %v, %+v; want num_deleted 2 (distinct ids requested)", err, res)
	}
	l.calls[gone] = slices.DeleteFunc(l.calls[gone], func(id string) bool { return id == "c-1" || id == "c-2" })

	waitLanded(t, store, l)
	waitFor(t, 30*time.Second, "the update to apply", func() bool {
		for _, c := range storedCalls(t, store, renamed) {
			if c.ID == "c-0" {
				return c.DisplayName == "renamed"
			}
		}
		return false
	})
	if got := prod.Stats().AckedOps; got != int64(2*len(projects)*60+2) {
		t.Errorf("producer acknowledged %d ops, want %d", got, 2*len(projects)*60+2)
	}
	if s := proc.Stats(); s.DeadLettered != 0 || s.Batches == 0 {
		t.Errorf("processor stats %+v: want batches and no dead letters", s)
	}
}

// flakyWriter fails with storage.ErrUnavailable while down is set.
type flakyWriter struct {
	storage.CallWriter
	down     atomic.Bool
	failures atomic.Int64
}

func (f *flakyWriter) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if f.down.Load() {
		f.failures.Add(1)
		return nil, fmt.Errorf("disk detached: %w", storage.ErrUnavailable)
	}
	return f.CallWriter.WriteCallOps(ctx, ops)
}

func TestStorageOutageCommitsNothingThenRecovers(t *testing.T) {
	_, cfg := startKafka(t, "calls-outage")
	store := openStore(t)
	flaky := &flakyWriter{CallWriter: store}
	flaky.down.Store(true)
	proc := startProcessor(t, cfg, flaky)
	prod := newProducer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	l := newLedger()
	for _, err := range produceCalls(ctx, prod, projectsCovering(testPartitions, 1), 40, "c", l) {
		if err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the processor to retry the failing write", func() bool { return flaky.failures.Load() >= 5 })
	committed := committedOffsets(t, cfg)
	for part, off := range committed {
		if off >= 0 {
			t.Errorf("partition %d committed offset %d while storage was down", part, off)
		}
	}
	if s := proc.Stats(); s.Batches != 0 || s.WriteRetries < 5 {
		t.Errorf("stats while down %+v: want no batches done and retries counted", s)
	}

	flaky.down.Store(false)
	waitLanded(t, store, l)
	ends := endOffsets(t, cfg)
	waitFor(t, 30*time.Second, "offsets to be committed up to the end", func() bool {
		got := committedOffsets(t, cfg)
		for part, end := range ends {
			if got[part] != end {
				return false
			}
		}
		return true
	})
}

// crashingWriter writes the first batch for real, then "crashes" the
// processor before it can commit: it cancels the processor and reports
// the write as failed.
type crashingWriter struct {
	storage.CallWriter
	crash   context.CancelFunc
	once    sync.Once
	crashed atomic.Bool
}

func (c *crashingWriter) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	res, err := c.CallWriter.WriteCallOps(ctx, ops)
	if err != nil || c.crashed.Load() {
		return res, err
	}
	c.once.Do(func() { c.crashed.Store(true); c.crash() })
	return nil, fmt.Errorf("process killed after the write: %w", storage.ErrUnavailable)
}

func TestKilledProcessorBatchIsRedeliveredWithoutDuplicates(t *testing.T) {
	_, cfg := startKafka(t, "calls-crash")
	store := openStore(t)
	prod := newProducer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := newLedger()
	for _, err := range produceCalls(ctx, prod, projectsCovering(testPartitions, 1), 30, "c", l) {
		if err != nil {
			t.Fatal(err)
		}
	}
	total := int64(2 * l.count())

	first, err := NewReceiver(telemetry.NopSettings("kafka"), cfg, nil)
	if err == nil {
		t.Fatal("NewReceiver accepted a nil writer")
	}
	pctx, kill := context.WithCancel(context.Background())
	crasher := &crashingWriter{CallWriter: store, crash: kill}
	if first, err = NewReceiver(telemetry.NopSettings("kafka"), cfg, pipelineTo(t, crasher)); err != nil {
		t.Fatal(err)
	}
	if err := first.Run(pctx); err != nil {
		t.Fatalf("Run after the kill: %v", err)
	}
	if !crasher.crashed.Load() || first.Stats().Batches != 0 {
		t.Fatalf("first processor: crashed %v, stats %+v; want a crash before any commit", crasher.crashed.Load(), first.Stats())
	}
	for part, off := range committedOffsets(t, cfg) {
		if off >= 0 {
			t.Fatalf("partition %d committed offset %d although the batch never finished", part, off)
		}
	}

	second := startProcessor(t, cfg, store)
	waitLanded(t, store, l)
	// At least once: a rebalance may hand the second processor some
	// records twice; waitLanded has checked that each call landed once.
	waitFor(t, 30*time.Second, "the second processor to handle every record", func() bool {
		return second.Stats().Records >= total
	})
}

// committedOffsets returns the group's committed offset per partition of
// the call topic (-1 when none).
func committedOffsets(t testing.TB, cfg kafkabase.Config) map[int]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...)}
	parts := make([]int, testPartitions)
	for i := range parts {
		parts[i] = i
	}
	res, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: cfg.Consumer.Group, Topics: map[string][]int{cfg.Topic: parts}})
	if err != nil {
		t.Fatalf("offset fetch: %v", err)
	}
	out := map[int]int64{}
	for _, p := range res.Topics[cfg.Topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

// endOffsets returns the next offset to be written per partition.
func endOffsets(t testing.TB, cfg kafkabase.Config) map[int]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...)}
	var reqs []kafka.OffsetRequest
	for p := range testPartitions {
		reqs = append(reqs, kafka.LastOffsetOf(p))
	}
	res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{cfg.Topic: reqs}})
	if err != nil {
		t.Fatalf("list offsets: %v", err)
	}
	out := map[int]int64{}
	for _, p := range res.Topics[cfg.Topic] {
		out[p.Partition] = p.LastOffset
	}
	return out
}
