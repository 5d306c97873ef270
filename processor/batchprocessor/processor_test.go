package batchprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// recordingWriter is a next consumer that remembers batches and can block
// or fail on demand.
type recordingWriter struct {
	mu      sync.Mutex
	batches [][]storage.CallOp
	gate    chan struct{} // when set, each write waits for a receive
	entered chan struct{} // when set, each write says so before the gate
	fail    func([]storage.CallOp) error
	opened  sync.Once
}

// open lets every write through the gate, once.
func (w *recordingWriter) open() { w.opened.Do(func() { close(w.gate) }) }

func (w *recordingWriter) ConsumeCalls(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if w.entered != nil {
		w.entered <- struct{}{}
	}
	if w.gate != nil {
		<-w.gate
	}
	if w.fail != nil {
		if err := w.fail(ops); err != nil {
			return nil, err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batches = append(w.batches, ops)
	res := make([]storage.CallOpResult, len(ops))
	for i, op := range ops {
		if op.Delete != nil {
			res[i].NumDeleted = len(op.Delete.IDs)
		}
	}
	return res, nil
}

func startOp(id string) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: id, OpName: "op"}}}
}

func newTestQueue(t *testing.T, cfg Config, w consumer.Calls) *Processor {
	t.Helper()
	q := startProcessor(t, cfg, w)
	t.Cleanup(func() { _ = q.Shutdown(context.Background()) })
	return q
}

func startProcessor(t *testing.T, cfg Config, w consumer.Calls) *Processor {
	t.Helper()
	q, err := New(telemetry.NopSettings("batch"), cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return q
}

func TestSubmitOverloadAnswersAtOnce(t *testing.T) {
	w := &recordingWriter{gate: make(chan struct{})}
	cfg := DefaultConfig()
	cfg.MaxQueuedOps = 2
	q := newTestQueue(t, cfg, w)
	done := make(chan error, 2)
	for _, id := range []string{"a", "b"} {
		go func() { _, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp(id)}); done <- err }()
	}
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); ops, _ := q.admitted.Held(); return ops == 2 })
	if _, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp("c")}); !errors.Is(err, consumer.ErrOverloaded) {
		t.Fatalf("third submit err = %v, want consumer.ErrOverloaded", err)
	}
	w.open()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupCommitSharesOneWrite(t *testing.T) {
	w := &recordingWriter{gate: make(chan struct{}), entered: make(chan struct{}, 8)}
	q := newTestQueue(t, DefaultConfig(), w)
	var wg sync.WaitGroup
	for _, id := range []string{"first", "a", "b", "c"} {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = q.ConsumeCalls(context.Background(), []storage.CallOp{startOp(id)}) }()
		if id == "first" {
			// let the writer pick up "first" and block on the gate
			holding(t, w)
		}
	}
	waitFor(t, func() bool { return len(q.pending) == 3 })
	w.gate <- struct{}{}
	w.gate <- struct{}{}
	wg.Wait()
	if len(w.batches) != 2 || len(w.batches[1]) != 3 {
		t.Fatalf("batches = %d (sizes %v), want 2 with the second holding 3", len(w.batches), sizes(w.batches))
	}
}

func TestFailedBatchRetriesRequestsAlone(t *testing.T) {
	bad := errors.New("bad row")
	w := &recordingWriter{gate: make(chan struct{}), entered: make(chan struct{}, 8), fail: func(ops []storage.CallOp) error {
		for _, op := range ops {
			if op.Part != nil && op.Part.Call.ID == "poison" {
				return bad
			}
		}
		return nil
	}}
	q := newTestQueue(t, DefaultConfig(), w)
	errs := make(map[string]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range []string{"blocker", "good1", "poison", "good2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp(id)})
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		}()
		if id == "blocker" {
			holding(t, w)
		}
	}
	waitFor(t, func() bool { return len(q.pending) == 3 })
	w.open()
	wg.Wait()
	if errs["good1"] != nil || errs["good2"] != nil || errs["blocker"] != nil || !errors.Is(errs["poison"], bad) {
		t.Fatalf("errors = %v", errs)
	}
}

func TestStopFlushesAcceptedAndRefusesNew(t *testing.T) {
	w := &recordingWriter{}
	q := startProcessor(t, DefaultConfig(), w)
	if _, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp("a")}); err != nil {
		t.Fatal(err)
	}
	if err := q.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp("b")}); !errors.Is(err, consumer.ErrStopped) {
		t.Fatalf("submit after stop = %v, want consumer.ErrStopped", err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.MaxQueuedOps = 0 },
		func(c *Config) { c.MaxQueuedBytes = 0 },
		func(c *Config) { c.MaxBatchOps = 0 },
		func(c *Config) { c.BatchLinger = -1 },
	}
	for i, mut := range bad {
		c := DefaultConfig()
		mut(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func sizes(b [][]storage.CallOp) []int {
	out := make([]int, len(b))
	for i := range b {
		out[i] = len(b[i])
	}
	return out
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// holding waits until the writer is in a write, held at its gate: the
// ops of that write left the queue. (Counting the queue instead raced
// with admission, which counts a request before it enters the channel,
// and let the writer take later requests into its first batch.) Should
// the test fail from here on, the gate opens before the processor's
// shutdown waits for the writer.
func holding(t *testing.T, w *recordingWriter) {
	t.Helper()
	t.Cleanup(w.open)
	select {
	case <-w.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not start a write in 5s")
	}
}

// A request admitted just before Shutdown must be exported and answered,
// never left waiting: Shutdown waits for everything admitted.
func TestShutdownAnswersRequestAdmittedBeforeIt(t *testing.T) {
	w := &recordingWriter{}
	q := startProcessor(t, DefaultConfig(), w)
	req := &request{ops: []storage.CallOp{startOp("late")}, bytes: 64, done: make(chan error, 1)}
	if err := q.admit(req); err != nil {
		t.Fatal(err)
	}
	shutdown := make(chan error, 1)
	go func() { shutdown <- q.Shutdown(context.Background()) }()
	time.Sleep(20 * time.Millisecond) // the goroutine sees the stop before the request
	q.pending <- req
	if err := <-req.done; err != nil {
		t.Fatalf("admitted request answered %v", err)
	}
	if err := <-shutdown; err != nil {
		t.Fatal(err)
	}
	if len(w.batches) != 1 {
		t.Fatalf("batches = %d, want the admitted one", len(w.batches))
	}
}

func TestMergesPartsOfOneCallInABatch(t *testing.T) {
	w := &recordingWriter{}
	q := newTestQueue(t, DefaultConfig(), w)
	end := storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: "a"}}}
	if _, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp("a"), end}); err != nil {
		t.Fatal(err)
	}
	if len(w.batches) != 1 || len(w.batches[0]) != 1 || w.batches[0][0].Part.Kind != storage.PartComplete {
		t.Fatalf("batches = %v, want one complete part", w.batches)
	}
}

func TestConsumeBeforeStartIsRefused(t *testing.T) {
	q, err := New(telemetry.NopSettings("batch"), DefaultConfig(), &recordingWriter{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.ConsumeCalls(context.Background(), []storage.CallOp{startOp("a")}); !errors.Is(err, consumer.ErrStopped) {
		t.Fatalf("err = %v, want ErrStopped", err)
	}
}
