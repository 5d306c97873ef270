package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// recordingWriter is a storage.CallWriter that remembers batches and can
// block or fail on demand.
type recordingWriter struct {
	mu      sync.Mutex
	batches [][]storage.CallOp
	gate    chan struct{} // when set, each write waits for a receive
	fail    func([]storage.CallOp) error
}

func (w *recordingWriter) WriteCallOps(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
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

func newTestQueue(t *testing.T, cfg Config, w storage.CallWriter) *Queue {
	t.Helper()
	q, err := NewQueue(cfg, w, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	return q
}

func TestSubmitOverloadAnswersAtOnce(t *testing.T) {
	w := &recordingWriter{gate: make(chan struct{})}
	cfg := DefaultConfig()
	cfg.MaxQueuedOps = 2
	q := newTestQueue(t, cfg, w)
	done := make(chan error, 2)
	for _, id := range []string{"a", "b"} {
		go func() { _, err := q.Submit(context.Background(), []storage.CallOp{startOp(id)}); done <- err }()
	}
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.queuedOps == 2 })
	if _, err := q.Submit(context.Background(), []storage.CallOp{startOp("c")}); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("third submit err = %v, want ErrOverloaded", err)
	}
	close(w.gate)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupCommitSharesOneWrite(t *testing.T) {
	w := &recordingWriter{gate: make(chan struct{})}
	q := newTestQueue(t, DefaultConfig(), w)
	var wg sync.WaitGroup
	for _, id := range []string{"first", "a", "b", "c"} {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = q.Submit(context.Background(), []storage.CallOp{startOp(id)}) }()
		if id == "first" {
			// let the writer pick up "first" and block on the gate
			waitFor(t, func() bool { return pickedUp(q, 1) })
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
	w := &recordingWriter{gate: make(chan struct{}), fail: func(ops []storage.CallOp) error {
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
			_, err := q.Submit(context.Background(), []storage.CallOp{startOp(id)})
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		}()
		if id == "blocker" {
			waitFor(t, func() bool { return pickedUp(q, 1) })
		}
	}
	waitFor(t, func() bool { return len(q.pending) == 3 })
	close(w.gate)
	wg.Wait()
	if errs["good1"] != nil || errs["good2"] != nil || errs["blocker"] != nil || !errors.Is(errs["poison"], bad) {
		t.Fatalf("errors = %v", errs)
	}
}

func TestStopFlushesAcceptedAndRefusesNew(t *testing.T) {
	w := &recordingWriter{}
	q, err := NewQueue(DefaultConfig(), w, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(context.Background(), []storage.CallOp{startOp("a")}); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(context.Background(), []storage.CallOp{startOp("b")}); !errors.Is(err, ErrStopped) {
		t.Fatalf("submit after stop = %v, want ErrStopped", err)
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

// pickedUp reports that n ops are admitted and none wait in the channel:
// the writer holds them.
func pickedUp(q *Queue, n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queuedOps == n && len(q.pending) == 0
}
