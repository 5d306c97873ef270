package storageexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/internal/wal"
	"github.com/weftdev/weft/storage"
)

// writeLog leaves batches in dir's log as a run that acknowledged them
// and died before storing any would.
func writeLog(t *testing.T, dir string, batches ...[]storage.CallOp) {
	t.Helper()
	l, err := wal.Open(dir, wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ops := range batches {
		if _, err := l.Append(EncodeRecord(ops)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer is a log destination for a test to read.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startLogged is startExporter with the log and metrics kept.
func startLogged(t *testing.T, cfg Config, store storage.CallWriter) (*Exporter, *lockedBuffer, *telemetry.Metrics) {
	t.Helper()
	logs := &lockedBuffer{}
	set := telemetry.NopSettings("storage")
	set.Logger = slog.New(slog.NewTextHandler(logs, nil))
	e, err := New(set, cfg, store, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return e, logs, set.Metrics
}

func rejectedIDs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "rejected-*.rec"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := decodeOps(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, op := range ops {
			ids = append(ids, callIDs(op))
		}
	}
	slices.Sort(ids)
	return ids
}

// Start returns while the log of an earlier run is still being stored:
// new batches get storage.ErrUnavailable meanwhile, Health says how far
// the replay is, and reads wait for the replayed records.
func TestStartDoesNotWaitForTheReplay(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, []storage.CallOp{part("a"), part("b")}, []storage.CallOp{part("c")})
	store := newFakeStore()
	store.hold = make(chan struct{})
	e := startExporter(t, testConfig(dir), store) // returns with the store holding the first write
	defer e.Shutdown(context.Background())

	_, err := e.ConsumeCalls(context.Background(), []storage.CallOp{part("new")})
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), "0 of 2 log records") {
		t.Fatalf("write during the replay: %v, want storage.ErrUnavailable with the progress", err)
	}
	if h := e.Health(); h.Ready() || !h.Replaying || h.ReplayTotal != 2 || h.ReplayDone != 0 {
		t.Fatalf("health during the replay = %+v", h)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.Barrier(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Barrier during the replay = %v, want it to wait for the replayed records", err)
	}

	close(store.hold)
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if !store.has(id) {
			t.Fatalf("replayed call %s missing", id)
		}
	}
	waitFor(t, func() bool { return e.Health().Ready() })
	consume(t, e, part("new"))
	if err := e.Barrier(context.Background()); err != nil || !store.has("new") {
		t.Fatalf("write after the replay: %v, stored %v", err, store.has("new"))
	}
}

// The poisoned directory: acknowledged records the store refuses, even
// alone, while it takes other writes. The replay tries each alone a few
// times, sets it aside in the rejected file with the metric and a log
// line naming project and call, and stores every other record, in order.
func TestReplaySetsAsideRecordsTheStoreRefusesAlone(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir,
		[]storage.CallOp{part("a"), part("poison-1")},
		[]storage.CallOp{part("b"), part("flaky")},
		[]storage.CallOp{part("poison-2"), part("c")})
	store := newFakeStore()
	store.refuse = func(op storage.CallOp) bool { return strings.HasPrefix(op.Part.Call.ID, "poison") }
	store.refuseTimes["flaky"] = 2 // refused twice alone, then stored: not set aside
	cfg := testConfig(dir)
	cfg.RecordAttempts = 3
	e, logs, m := startLogged(t, cfg, store)
	defer e.Shutdown(context.Background())
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	order, refused := slices.Clone(store.order), store.refused["poison-1"]
	store.mu.Unlock()
	if want := []string{"a", "b", "flaky", "c"}; !slices.Equal(order, want) {
		t.Fatalf("stored %v, want %v in that order", order, want)
	}
	if refused != cfg.RecordAttempts {
		t.Errorf("poison-1 was refused %d times alone, want %d", refused, cfg.RecordAttempts)
	}
	if got := rejectedIDs(t, dir); !slices.Equal(got, []string{"poison-1", "poison-2"}) {
		t.Fatalf("rejected file holds %v, want the two poisoned records", got)
	}
	var rejected dto.Metric
	if err := m.StorageRejectedOps.WithLabelValues("test").Write(&rejected); err != nil || rejected.GetCounter().GetValue() != 2 {
		t.Errorf("weft_storage_rejected_calls = %v (%v), want 2", rejected.GetCounter().GetValue(), err)
	}
	for _, id := range []string{"poison-1", "poison-2"} {
		if !strings.Contains(logs.String(), "project=e/p call_id="+id) {
			t.Errorf("no log line names project e/p and call %s:\n%s", id, logs)
		}
	}
	if h := e.Health(); !h.Ready() || h.Failures != 0 {
		t.Errorf("health after the replay = %+v", h)
	}
	consume(t, e, part("d"))
	if err := e.Barrier(context.Background()); err != nil || !store.has("d") {
		t.Fatalf("write after the replay: %v", err)
	}
}

// A store that takes no writes at all, probes included, is waited for
// during a replay: nothing is set aside, and the records are stored once
// it is back.
func TestReplayWaitsForAStoreThatIsDown(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, []storage.CallOp{part("a"), part("b")}, []storage.CallOp{part("c")})
	store := newFakeStore()
	store.setDown(true)
	cfg := testConfig(dir)
	cfg.RecordAttempts = 1
	e := startExporter(t, cfg, store)
	defer e.Shutdown(context.Background())
	waitFor(t, func() bool { return e.Health().StoreDown })
	time.Sleep(3 * retryPause)
	if h := e.Health(); h.Ready() || !h.Replaying || h.Failures < 2 {
		t.Fatalf("health with the store down = %+v", h)
	}
	if got := rejectedIDs(t, dir); len(got) != 0 {
		t.Fatalf("records set aside while the store was down: %v", got)
	}
	store.setDown(false)
	if err := e.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if !store.has(id) {
			t.Fatalf("call %s not stored once the store was back", id)
		}
	}
	if got := rejectedIDs(t, dir); len(got) != 0 {
		t.Fatalf("records set aside: %v", got)
	}
	waitFor(t, func() bool { return e.Health().Ready() })
}

// Shutdown during a long replay returns at once, after the write in hand;
// reads waiting for the replay are answered; the applied mark moves only
// past what was stored and checkpointed; the next start stores the rest.
func TestShutdownDuringReplayResumesOnTheNextStart(t *testing.T) {
	dir := t.TempDir()
	const n = 60
	batches := make([][]storage.CallOp, n)
	for i := range batches {
		batches[i] = []storage.CallOp{part(fmt.Sprint("r", i))}
	}
	writeLog(t, dir, batches...)
	store := newCheckpointingStore()
	store.delay = 20 * time.Millisecond // the whole replay takes over a second
	cfg := testConfig(dir)
	cfg.MaxApplyOps = 1
	e := startExporter(t, cfg, store)
	waitFor(t, func() bool { return e.Health().ReplayDone >= 5 })
	read := make(chan error, 1)
	go func() { read <- e.Barrier(context.Background()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > time.Second {
		t.Fatalf("shutdown during the replay took %v", took)
	}
	if err := <-read; !errors.Is(err, consumer.ErrStopped) {
		t.Fatalf("a read waiting for the replay got %v, want ErrStopped", err)
	}
	mark := readApplied(dir)
	for i := range n {
		if id := fmt.Sprint("r", i); uint64(i) < mark && !store.isDurable(id) {
			t.Fatalf("applied mark %d is past %s, which was not checkpointed", mark, id)
		}
	}
	if mark == 0 || mark >= n {
		t.Fatalf("applied mark %d after a replay cut short, want some of %d", mark, n)
	}
	store.crash() // only what was checkpointed survives

	store.mu.Lock()
	store.delay = 0
	store.mu.Unlock()
	next := startExporter(t, cfg, store)
	defer next.Shutdown(context.Background())
	if err := next.Barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.fakeStore.mu.Lock()
	defer store.fakeStore.mu.Unlock()
	if len(store.calls) != n {
		t.Fatalf("%d calls stored after the next start, want %d", len(store.calls), n)
	}
}
