package duckdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"
	"github.com/weftdev/weft/storage"
)

// TestStoreUnderConcurrentWritesReadsAndCheckpoints runs the store the way
// a center taking an agent's backlog does: one writer appending new calls
// and merging ends and repeated starts into stored ones, checkpoints of the
// unlogged calls file, paged reads of the whole project and point reads,
// each read canceled at random, and a collector kept busy. Every read that
// ends without an error must hold at least every call committed before it
// started: a short answer without an error is the failure it looks for, as
// is any crash.
//
// It runs for WEFT_STRESS_DURATION (a Go duration, shared by its cases)
// when that is set, and for a few seconds otherwise, on a buffer pool of
// WEFT_STRESS_MEMORY_MB (the store's default otherwise). With 128 it
// reproduced DuckDB's native crash under a full pool within minutes, and
// short reads after a fresh store's first checkpoint, until merges updated
// rows in place through a stage table (docs/adr/0020 to 0022); reads the
// pool cannot hold are refused (counted), never short.
func TestStoreUnderConcurrentWritesReadsAndCheckpoints(t *testing.T) {
	d := 8 * time.Second
	if v := os.Getenv("WEFT_STRESS_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("WEFT_STRESS_DURATION: %v", err)
		}
	}
	memoryMB := DefaultMemoryMB
	if v := os.Getenv("WEFT_STRESS_MEMORY_MB"); v != "" {
		var err error
		if memoryMB, err = strconv.Atoi(v); err != nil {
			t.Fatalf("WEFT_STRESS_MEMORY_MB: %v", err)
		}
	}
	cases := []struct {
		name         string
		endsPerBatch int
	}{
		// An agent forwarding as it goes: ends mostly in the next batch.
		{"live", 200},
		// An agent replaying its backlog into a restarted center: batches
		// of ends for calls stored long before, each a merge.
		{"replay", 4000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := newStressRun(tc.endsPerBatch, memoryMB)
			// The store is closed and opened again between rounds: the
			// crashes this looks for came from a process started on a
			// directory an earlier one had written, reading calls from
			// checkpointed row groups.
			const rounds = 3
			for round := range rounds {
				if !st.round(t, dir, d/time.Duration(rounds*len(cases))) {
					t.Fatalf("round %d failed", round)
				}
			}
			t.Logf("%d write batches (%d refused for memory and written again), %d checkpoints, %d calls committed; %d whole reads (%d canceled, %d stopped by a checkpoint), %d point reads; %d reads refused for memory",
				st.batches.Load(), st.writesRefused.Load(), st.checkpoints.Load(), st.committed.Load(), st.reads.Load(), st.canceled.Load(), st.stopped.Load(), st.points.Load(), st.refused.Load())
			if st.reads.Load()-st.canceled.Load()-st.stopped.Load() == 0 {
				t.Error("no read ran to its end; the run proves nothing")
			}
		})
	}
}

// round opens the store in dir, runs the writer, readers and heap churn
// against it for d, and closes it; it reports whether all went well.
func (st *stressRun) round(t *testing.T, dir string, d time.Duration) bool {
	t.Helper()
	s, err := OpenWithOptions(context.Background(), dir, Options{CallsUnlogged: true, MemoryMB: st.memoryMB}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Error(err)
		return false
	}
	s.pageSize = 700 // many pages per read
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
		cancel()
	}
	wg.Go(func() {
		if err := st.write(ctx, s); err != nil {
			report(err)
		}
	})
	for r := range 2 {
		wg.Go(func() {
			if err := st.readPages(ctx, s, uint64(r)); err != nil {
				report(err)
			}
		})
	}
	wg.Go(func() {
		if err := st.readPoints(ctx, s); err != nil {
			report(err)
		}
	})
	wg.Go(func() { churnHeap(ctx) })
	wg.Wait()
	close(errs)
	ok := true
	for err := range errs {
		t.Error(err)
		ok = false
	}
	// The writer checkpoints every few batches; what it wrote since the
	// last one is made durable here, as the exporter does at shutdown.
	if err := s.CheckpointCalls(context.Background()); err != nil {
		t.Error(err)
		ok = false
	}
	if err := s.Close(); err != nil {
		t.Error(err)
		ok = false
	}
	return ok
}

type stressRun struct {
	// endsPerBatch is how many stored calls each write batch merges into.
	endsPerBatch  int
	memoryMB      int          // the store's buffer pool
	committed     atomic.Int64 // calls whose start is committed, ids s0..s(n-1)
	batches       atomic.Int64
	checkpoints   atomic.Int64
	stopped       atomic.Int64 // whole reads a checkpoint stopped
	reads         atomic.Int64
	canceled      atomic.Int64
	points        atomic.Int64
	refused       atomic.Int64 // reads DuckDB refused for memory, below the default pool
	writesRefused atomic.Int64 // write batches refused so, and written again
}

// refusedForMemory reports, and counts in n, a statement that DuckDB
// refused with an out-of-memory error on a pool smaller than the store's
// default: an honest error on a pool sized to make DuckDB evict, not the
// short read or the crash the test looks for. At the default pool it is a
// failure.
func (st *stressRun) refusedForMemory(err error, n *atomic.Int64) bool {
	var dbErr *duckdbdriver.Error
	if st.memoryMB >= DefaultMemoryMB || !errors.As(err, &dbErr) || dbErr.Type != duckdbdriver.ErrorTypeOutOfMemory {
		return false
	}
	n.Add(1)
	return true
}

func newStressRun(endsPerBatch, memoryMB int) *stressRun {
	return &stressRun{endsPerBatch: endsPerBatch, memoryMB: memoryMB}
}

const stressProject = "stress/p"

func stressCall(i int64, kind storage.PartKind, rng *rand.Rand) *storage.CallPart {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	c := storage.Call{ProjectID: stressProject, ID: fmt.Sprintf("s%08d", i)}
	text := func(n int) string {
		b := make([]byte, n)
		for j := range b {
			b[j] = 'a' + byte(rng.IntN(26))
		}
		return string(b)
	}
	if kind.HasStart() {
		c.TraceID = fmt.Sprintf("t%06d", i/50)
		c.OpName = "op"
		c.StartedAt = now
		c.Attributes = json.RawMessage(`{}`)
		c.Inputs, _ = json.Marshal(map[string]string{"prompt": text(100 + rng.IntN(400))})
		if rng.IntN(2) == 0 {
			c.OtelDump, _ = json.Marshal(map[string]any{"name": "op", "attributes": map[string]string{"k": text(200)}})
		}
	}
	if kind.HasEnd() {
		end := now.Add(time.Second)
		c.EndedAt = &end
		c.Output, _ = json.Marshal(text(50 + rng.IntN(300)))
		c.Summary = json.RawMessage(`{"usage":{}}`)
	}
	return &storage.CallPart{Kind: kind, Call: c}
}

// write appends batches of new calls, ends of earlier ones and repeated
// starts (both merged into stored rows), and checkpoints every few batches.
func (st *stressRun) write(ctx context.Context, s *Store) error {
	rng := rand.New(rand.NewPCG(1, 2))
	next := st.committed.Load()
	for ctx.Err() == nil {
		var ops []storage.CallOp
		seen := map[int64]bool{}
		fresh := next
		for range 400 {
			ops = append(ops, storage.CallOp{Part: stressCall(next, storage.PartStart, rng)})
			seen[next] = true
			next++
		}
		for range st.endsPerBatch {
			if fresh == 0 {
				break
			}
			i := rng.Int64N(fresh)
			if seen[i] {
				continue
			}
			seen[i] = true
			kind := storage.PartEnd
			if rng.IntN(4) == 0 {
				kind = storage.PartStart | storage.PartEnd
			}
			ops = append(ops, storage.CallOp{Part: stressCall(i, kind, rng)})
		}
		// Renames, as the SDKs send them: of stored calls, and of calls
		// whose start comes in a later batch (kept in a placeholder row).
		// With merged ends they make the checkpoints rewrite row groups
		// that reads are scanning.
		for range 60 {
			i := rng.Int64N(next + 400)
			ops = append(ops, storage.CallOp{Update: &storage.CallUpdate{ProjectID: stressProject, ID: fmt.Sprintf("s%08d", i),
				DisplayName: fmt.Sprintf("renamed-%d", rng.IntN(1000))}})
		}
		if err := st.writeBatch(ctx, s, ops); err != nil {
			return err
		}
		st.committed.Store(next)
		// Every fifth batch a checkpoint that gives way to paged reads, as
		// the storage exporter tries first; every tenth one that cannot.
		switch n := st.batches.Add(1); {
		case n%10 == 0:
			if err := s.CheckpointCalls(context.WithoutCancel(ctx)); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			st.checkpoints.Add(1)
		case n%5 == 0:
			done, err := s.TryCheckpointCalls(context.WithoutCancel(ctx))
			if err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			if done {
				st.checkpoints.Add(1)
			}
		}
	}
	return nil
}

// writeBatch writes one batch. A batch DuckDB refuses for memory, on a
// pool below the default, is written again after a pause, as the storage
// exporter does (its transaction was rolled back); it is counted, and
// fails the run only when the store never takes it.
func (st *stressRun) writeBatch(ctx context.Context, s *Store, ops []storage.CallOp) error {
	const attempts = 50
	for attempt := 1; ; attempt++ {
		_, err := s.WriteCallOps(context.WithoutCancel(ctx), ops)
		if err == nil {
			return nil
		}
		if attempt == attempts || !st.refusedForMemory(err, &st.writesRefused) {
			return fmt.Errorf("write batch %d (attempt %d): %w", st.batches.Load(), attempt, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readPages reads the whole project in pages, canceling some reads part
// way, and checks that a read that ended without an error is whole.
func (st *stressRun) readPages(ctx context.Context, s *Store, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	for ctx.Err() == nil {
		want := st.committed.Load()
		rctx, cancel := context.WithCancel(ctx)
		if rng.IntN(3) == 0 {
			time.AfterFunc(time.Duration(rng.IntN(20))*time.Millisecond, cancel)
		}
		var n int64
		var failed error
		for _, err := range s.QueryCalls(rctx, storage.CallsQuery{ProjectID: stressProject}) {
			if err != nil {
				failed = err
				break
			}
			n++
		}
		cancel()
		st.reads.Add(1)
		switch {
		case failed != nil && (errors.Is(failed, context.Canceled) || rctx.Err() != nil):
			st.canceled.Add(1)
		case errors.Is(failed, errReadStopped):
			st.stopped.Add(1) // a checkpoint could wait no longer: an error, not a short read
		case st.refusedForMemory(failed, &st.refused):
		case failed != nil:
			return fmt.Errorf("whole read: %w", failed)
		case n < want:
			return fmt.Errorf("whole read ended without an error after %d calls; %d were committed before it started", n, want)
		}
	}
	return nil
}

// readPoints reads single calls and traces by id, some canceled at once.
func (st *stressRun) readPoints(ctx context.Context, s *Store) error {
	rng := rand.New(rand.NewPCG(3, 4))
	for ctx.Err() == nil {
		n := st.committed.Load()
		if n == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		i := rng.Int64N(n)
		rctx, cancel := context.WithCancel(ctx)
		if rng.IntN(4) == 0 {
			cancel()
		}
		q := storage.CallsQuery{ProjectID: stressProject, Filter: storage.CallsFilter{CallIDs: []string{fmt.Sprintf("s%08d", i)}}, Limit: 1}
		if rng.IntN(2) == 0 {
			q = storage.CallsQuery{ProjectID: stressProject, Filter: storage.CallsFilter{TraceIDs: []string{fmt.Sprintf("t%06d", i/50)}}}
		}
		got := 0
		var failed error
		for _, err := range s.QueryCalls(rctx, q) {
			if err != nil {
				failed = err
				break
			}
			got++
		}
		canceled := rctx.Err() != nil
		cancel()
		st.points.Add(1)
		if failed != nil && !canceled && !st.refusedForMemory(failed, &st.refused) {
			return fmt.Errorf("point read: %w", failed)
		}
		if failed == nil && got == 0 {
			return fmt.Errorf("point read of committed call s%08d found nothing", i)
		}
	}
	return nil
}

// churnHeap keeps the collector running so that a stray write into the Go
// heap is found by the next cycle rather than by luck.
func churnHeap(ctx context.Context) {
	var keep [][]byte
	for ctx.Err() == nil {
		for range 1000 {
			keep = append(keep, make([]byte, 64+rand.IntN(4096)))
		}
		if len(keep) > 20000 {
			keep = keep[:0]
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}
