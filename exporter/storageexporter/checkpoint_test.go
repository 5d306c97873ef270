package storageexporter

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// checkpointingStore keeps stored calls in memory until CheckpointCalls
// makes them durable; crash drops what was not checkpointed.
type checkpointingStore struct {
	*fakeStore
	mu      sync.Mutex
	durable map[string]storage.CallPart
	refuse  bool // CheckpointCalls fails
}

func newCheckpointingStore() *checkpointingStore {
	return &checkpointingStore{fakeStore: newFakeStore(), durable: map[string]storage.CallPart{}}
}

func (s *checkpointingStore) CallsNeedCheckpoint() bool { return true }

func (s *checkpointingStore) CheckpointCalls(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse {
		return errors.New("checkpoint refused")
	}
	s.fakeStore.mu.Lock()
	s.durable = maps.Clone(s.fakeStore.calls)
	s.fakeStore.mu.Unlock()
	return nil
}

func (s *checkpointingStore) crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fakeStore.mu.Lock()
	s.fakeStore.calls = maps.Clone(s.durable)
	s.fakeStore.mu.Unlock()
}

func (s *checkpointingStore) isDurable(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.durable[id]
	return ok
}

// TestStoredButNotCheckpointedIsReplayed: with a store that is durable
// only at checkpoints, the log keeps what was stored until a checkpoint
// succeeds, and a crash before it replays those records.
func TestStoredButNotCheckpointedIsReplayed(t *testing.T) {
	dir := t.TempDir()
	store := newCheckpointingStore()
	store.refuse = true
	crashed := startExporter(t, testConfig(dir), store)
	for _, id := range []string{"a", "b"} {
		consume(t, crashed, part(id))
	}
	if err := crashed.Barrier(context.Background()); err != nil || !store.has("a") || !store.has("b") {
		t.Fatalf("acknowledged calls not readable: %v", err)
	}
	if mark := readApplied(dir); mark != 0 {
		t.Fatalf("applied mark moved to %d before any checkpoint", mark)
	}
	_ = crashed.log.Close() // the process dies before a checkpoint succeeds
	store.crash()
	if store.has("a") {
		t.Fatal("the crash kept an uncheckpointed call")
	}

	store.mu.Lock()
	store.refuse = false
	store.mu.Unlock()
	e := startExporter(t, testConfig(dir), store)
	defer e.Shutdown(context.Background())
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return readApplied(dir) == 2 }) // the checkpoint after the replay
	for _, id := range []string{"a", "b"} {
		if !store.has(id) || !store.isDurable(id) {
			t.Fatalf("call %s not stored and checkpointed after replay", id)
		}
	}
	consume(t, e, part("c"))
	waitFor(t, func() bool { return readApplied(dir) == 3 }) // the idle checkpoint
	if !store.isDurable("c") {
		t.Error("the applied mark passed a call not checkpointed")
	}
	_ = crashed.Shutdown(context.Background())
}

// A failed checkpoint makes the node not ready until one succeeds.
func TestHealthReportsAFailedCheckpoint(t *testing.T) {
	store := newCheckpointingStore()
	store.refuse = true
	e := startExporter(t, testConfig(t.TempDir()), store)
	defer e.Shutdown(context.Background())
	consume(t, e, part("a"))
	waitFor(t, func() bool { return e.Health().CheckpointFailed }) // the idle checkpoint
	if e.Health().Ready() {
		t.Fatal("ready with the last checkpoint failed")
	}
	store.mu.Lock()
	store.refuse = false
	store.mu.Unlock()
	consume(t, e, part("b"))
	waitFor(t, func() bool { return e.Health().Ready() })
	if !store.isDurable("a") || !store.isDurable("b") {
		t.Fatal("ready before the calls were checkpointed")
	}
}

// deferringStore is a checkpointing store whose checkpoints a long read
// holds up while busy.
type deferringStore struct {
	*checkpointingStore
	busy     bool
	deferred int
}

func (s *deferringStore) TryCheckpointCalls(ctx context.Context) (bool, error) {
	s.mu.Lock()
	busy := s.busy
	if busy {
		s.deferred++
	}
	s.mu.Unlock()
	if busy {
		return false, nil
	}
	return true, s.CheckpointCalls(ctx)
}

// TestCheckpointPutOffWhileALongReadRuns: a checkpoint a long read would
// hold up is put off, without reporting a failure, and made once the read
// is over; the log keeps the records meanwhile.
func TestCheckpointPutOffWhileALongReadRuns(t *testing.T) {
	dir := t.TempDir()
	store := &deferringStore{checkpointingStore: newCheckpointingStore(), busy: true}
	e := startExporter(t, testConfig(dir), store)
	defer e.Shutdown(context.Background())
	consume(t, e, part("a"))
	waitFor(t, func() bool { store.mu.Lock(); defer store.mu.Unlock(); return store.deferred > 0 }) // the idle checkpoint
	if store.isDurable("a") || readApplied(dir) != 0 {
		t.Fatal("checkpointed while the read ran")
	}
	if !e.Health().Ready() {
		t.Fatal("a put-off checkpoint made the node not ready")
	}
	store.mu.Lock()
	store.busy = false
	store.mu.Unlock()
	consume(t, e, part("b")) // the next idle checkpoint comes a second after it
	waitFor(t, func() bool { return readApplied(dir) == 2 })
	if !store.isDurable("a") || !store.isDurable("b") {
		t.Fatal("the applied mark passed a call not checkpointed")
	}
}

func TestCheckpointDeferralIsBounded(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name     string
		c        checkpointer
		mayDefer bool
	}{
		{"no deferrer", checkpointer{}, false},
		{"first time", checkpointer{deferrer: &deferringStore{}}, true},
		{"within both bounds", checkpointer{deferrer: &deferringStore{}, bytes: maxDeferredBytes - 1, deferredSince: now.Add(-maxDeferral + time.Second)}, true},
		{"too many bytes", checkpointer{deferrer: &deferringStore{}, bytes: maxDeferredBytes}, false},
		{"too long", checkpointer{deferrer: &deferringStore{}, deferredSince: now.Add(-maxDeferral)}, false},
	}
	for _, tc := range tests {
		if got := tc.c.mayDefer(now); got != tc.mayDefer {
			t.Errorf("%s: mayDefer = %v, want %v", tc.name, got, tc.mayDefer)
		}
	}
}
