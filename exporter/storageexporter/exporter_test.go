package storageexporter

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// fakeStore is a CallWriter that remembers what it stored and can hold
// writes or refuse them.
type fakeStore struct {
	mu     sync.Mutex
	calls  map[string]storage.CallPart
	writes int
	maxOps int           // the most ops one write carried
	hold   chan struct{} // when set, each write waits for a receive or close
	delay  time.Duration // each write takes this long
	// refuse fails every write holding an op it matches, as DuckDB fails
	// one that needs more memory than it has; refuseTimes does so that
	// many times per call id, then lets it through.
	refuse      func(storage.CallOp) bool
	refuseTimes map[string]int
	refused     map[string]int // writes of the call id alone refused
	down        bool           // every write fails, probes included
	order       []string       // call ids of stored parts, in order
	stores      map[string]int // times each call id was stored
}

func newFakeStore() *fakeStore {
	return &fakeStore{calls: map[string]storage.CallPart{}, refuseTimes: map[string]int{},
		refused: map[string]int{}, stores: map[string]int{}}
}

// errOutOfMemory is what DuckDB answers a write that needs more memory
// than its limit lets it have.
var errOutOfMemory = errors.New("Out of Memory Error: could not allocate block of size 512.0 MiB (384.0 MiB/384.0 MiB used)")

func (s *fakeStore) WriteCallOps(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if s.hold != nil {
		<-s.hold
	}
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
	time.Sleep(delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, errors.New("disk on fire")
	}
	for _, op := range ops {
		if op.Part == nil {
			continue
		}
		id := op.Part.Call.ID
		if s.refuse != nil && s.refuse(op) || s.refuseTimes[id] > 0 {
			if len(ops) == 1 {
				s.refused[id]++
				s.refuseTimes[id] = max(0, s.refuseTimes[id]-1)
			}
			return nil, errOutOfMemory
		}
	}
	s.writes++
	s.maxOps = max(s.maxOps, len(ops))
	res := make([]storage.CallOpResult, len(ops))
	for i, op := range ops {
		switch {
		case op.Part != nil:
			s.calls[op.Part.Call.ID] = *op.Part
			s.order = append(s.order, op.Part.Call.ID)
			s.stores[op.Part.Call.ID]++
		case op.Delete != nil:
			for _, id := range op.Delete.IDs {
				if _, ok := s.calls[id]; ok {
					delete(s.calls, id)
					res[i].NumDeleted++
				}
			}
		}
	}
	return res, nil
}

func (s *fakeStore) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.calls[id]
	return ok
}

func (s *fakeStore) setDown(v bool) {
	s.mu.Lock()
	s.down = v
	s.mu.Unlock()
}

func testConfig(dir string) Config {
	cfg := DefaultConfig()
	cfg.Dir = dir
	cfg.RecordBackoff = time.Millisecond
	return cfg
}

func startExporter(t *testing.T, cfg Config, store storage.CallWriter) *Exporter {
	t.Helper()
	e, err := New(telemetry.NopSettings("storage"), cfg, store, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return e
}

func part(id string) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{ProjectID: "e/p", ID: id, OpName: "op"}}}
}

func consume(t *testing.T, e *Exporter, ops ...storage.CallOp) []storage.CallOpResult {
	t.Helper()
	res, err := e.ConsumeCalls(context.Background(), ops)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBarrierSeesEveryAcknowledgedWrite(t *testing.T) {
	store := newFakeStore()
	e := startExporter(t, testConfig(t.TempDir()), store)
	defer e.Shutdown(context.Background())
	for _, id := range []string{"a", "b", "c"} {
		consume(t, e, part(id))
	}
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if !store.has(id) {
			t.Fatalf("call %s acknowledged but not in the store after Barrier", id)
		}
	}
}

// A backlog of large records is stored in several transactions, so the
// applier never holds much more than maxApplyBytes decoded at once.
func TestTransactionsAreBoundedByDecodedBytes(t *testing.T) {
	store := newFakeStore()
	store.hold = make(chan struct{})
	e := startExporter(t, testConfig(t.TempDir()), store)
	defer e.Shutdown(context.Background())
	consume(t, e, part("first")) // the applier takes it and waits on hold
	big := strings.Repeat("x", 5<<20)
	for i := range 5 {
		op := part(fmt.Sprint("big", i))
		op.Part.Call.Inputs = []byte(`{"text":"` + big + `"}`)
		consume(t, e, op)
	}
	close(store.hold)
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.maxOps > 2 || len(store.calls) != 6 {
		t.Fatalf("stored %d calls, at most %d in one write; want 6, at most 2 of 5 MiB under the %d MiB bound",
			len(store.calls), store.maxOps, maxApplyBytes>>20)
	}
}

func TestDeleteAnswersWhatTheStoreDeleted(t *testing.T) {
	e := startExporter(t, testConfig(t.TempDir()), newFakeStore())
	defer e.Shutdown(context.Background())
	consume(t, e, part("a"))
	res := consume(t, e, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"a", "missing"}}})
	if len(res) != 1 || res[0].NumDeleted != 1 {
		t.Fatalf("delete results = %+v, want one deleted", res)
	}
}

// A crash before the store took the backlog loses nothing: the next Start
// replays the log.
func TestReplayAfterCrashStoresTheBacklog(t *testing.T) {
	dir := t.TempDir()
	stuck := newFakeStore()
	stuck.hold = make(chan struct{}) // the store never finishes a write
	crashed := startExporter(t, testConfig(dir), stuck)
	for _, id := range []string{"a", "b", "c"} {
		consume(t, crashed, part(id))
	}
	_ = crashed.log.Close() // the process dies: no Shutdown, no apply

	store := newFakeStore()
	e := startExporter(t, testConfig(dir), store)
	defer e.Shutdown(context.Background())
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if !store.has(id) {
			t.Fatalf("acknowledged call %s missing after replay", id)
		}
	}
	consume(t, e, part("d"))
	if err := e.Barrier(context.Background()); err != nil || !store.has("d") {
		t.Fatalf("write after replay: %v, stored %v", err, store.has("d"))
	}
	// Let the first exporter's applier, stuck in the dead process's store,
	// finish before the test's directory is removed.
	close(stuck.hold)
	_ = crashed.Shutdown(context.Background())
}

func TestFullBacklogAnswersOverloaded(t *testing.T) {
	store := newFakeStore()
	store.hold = make(chan struct{})
	cfg := testConfig(t.TempDir())
	cfg.MaxUnappliedOps = 3
	e := startExporter(t, cfg, store)
	consume(t, e, part("a"), part("b"))
	consume(t, e, part("c")) // the applier may hold a and b; c waits
	waitFor(t, func() bool { e.mu.Lock(); defer e.mu.Unlock(); ops, _ := e.backlog.Held(); return ops == 3 })
	if _, err := e.ConsumeCalls(context.Background(), []storage.CallOp{part("d")}); !errors.Is(err, consumer.ErrOverloaded) {
		t.Fatalf("err = %v, want ErrOverloaded", err)
	}
	close(store.hold)
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ConsumeCalls(context.Background(), []storage.CallOp{part("e")}); !errors.Is(err, consumer.ErrStopped) {
		t.Fatalf("after shutdown err = %v, want ErrStopped", err)
	}
}

func TestRecordRefusedAloneIsSetAsideOthersStored(t *testing.T) {
	store := newFakeStore()
	store.refuse = func(op storage.CallOp) bool { return op.Part != nil && op.Part.Call.ID == "poison" }
	dir := t.TempDir()
	e := startExporter(t, testConfig(dir), store)
	consume(t, e, part("a"), part("poison"), part("b"))
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !store.has("a") || !store.has("b") || store.has("poison") {
		t.Fatalf("stored: a=%v b=%v poison=%v", store.has("a"), store.has("b"), store.has("poison"))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "rejected-*.rec")); len(m) != 1 {
		t.Fatalf("rejected files = %v, want one", m)
	}
	_ = e.Shutdown(context.Background())
}

// A store that refuses everything is down, not fed bad data: nothing is
// set aside, and the backlog is stored once it recovers.
func TestStoreDownIsRetriedNotSetAside(t *testing.T) {
	store := newFakeStore()
	store.setDown(true)
	dir := t.TempDir()
	e := startExporter(t, testConfig(dir), store)
	consume(t, e, part("a"), part("b"))
	time.Sleep(3 * retryPause)
	store.setDown(false)
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !store.has("a") || !store.has("b") {
		t.Fatal("backlog not stored after the store came back")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "rejected-*.rec")); len(m) != 0 {
		t.Fatalf("records set aside while the store was down: %v", m)
	}
	_ = e.Shutdown(context.Background())
}

func TestInvalidUTF8IsRefusedBeforeAcknowledgement(t *testing.T) {
	e := startExporter(t, testConfig(t.TempDir()), newFakeStore())
	defer e.Shutdown(context.Background())
	bad := part("x")
	bad.Part.Call.OpName = "op\xff"
	_, err := e.ConsumeCalls(context.Background(), []storage.CallOp{bad})
	if !errors.Is(err, storage.ErrInvalidArgument) || !containsAll(err.Error(), "op_name", "UTF-8") {
		t.Fatalf("err = %v, want ErrInvalidArgument naming op_name", err)
	}
}

func TestWithoutLogWritesDirectly(t *testing.T) {
	store := newFakeStore()
	e := startExporter(t, Config{}, store)
	consume(t, e, part("a"))
	if !store.has("a") {
		t.Fatal("direct write not in the store on return")
	}
	_ = e.Shutdown(context.Background())
	if _, err := e.ConsumeCalls(context.Background(), []storage.CallOp{part("b")}); !errors.Is(err, consumer.ErrStopped) {
		t.Fatalf("after shutdown err = %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
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

// Shutdown that runs out of time with the store down keeps the backlog in
// the log, answers without error, and the next start stores it.
func TestShutdownOutOfTimeKeepsTheBacklog(t *testing.T) {
	dir := t.TempDir()
	store := newFakeStore()
	store.setDown(true)
	e := startExporter(t, testConfig(dir), store)
	consume(t, e, part("a"), part("b"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a backlog: %v", err)
	}
	store.setDown(false)
	next := startExporter(t, testConfig(dir), store)
	defer next.Shutdown(context.Background())
	if err := next.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !store.has("a") || !store.has("b") {
		t.Fatal("the backlog left in the log was not stored on the next start")
	}
}

func TestSaturatedAtNineTenthsOfTheBacklog(t *testing.T) {
	store := newFakeStore()
	store.hold = make(chan struct{})
	cfg := testConfig(t.TempDir())
	cfg.MaxUnappliedOps = 10
	e := startExporter(t, cfg, store)
	ops := make([]storage.CallOp, 8)
	for i := range ops {
		ops[i] = part(fmt.Sprint(i))
	}
	consume(t, e, ops...)
	if e.Saturated() {
		t.Fatal("saturated at 8 of 10")
	}
	consume(t, e, part("x"))
	if !e.Saturated() {
		t.Fatal("not saturated at 9 of 10")
	}
	close(store.hold)
	if err := e.Barrier(context.Background()); err != nil || e.Saturated() {
		t.Fatalf("after the store caught up: %v, saturated %v", err, e.Saturated())
	}
	_ = e.Shutdown(context.Background())
}
