package duckdb

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// failsAfter is a context whose Err turns to Canceled after n calls: it
// stops a write at each step in turn, the way a client going away or a
// shutdown can stop it at any point.
type failsAfter struct {
	context.Context
	n, calls atomic.Int64
}

func (f *failsAfter) Err() error {
	if f.calls.Add(1) > f.n.Load() {
		return context.Canceled
	}
	return nil
}

// A write or a paged read stopped at any step, BEGIN and COMMIT included,
// leaves no transaction open on a pooled connection: such a connection
// fails every later statement and holds DuckDB's checkpoint lock, so the
// next checkpoint would wait for ever.
func TestStoppedWriteOrReadLeavesNoTransactionOpen(t *testing.T) {
	s, err := OpenWithOptions(context.Background(), t.TempDir(), Options{CallsUnlogged: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.db.SetMaxOpenConns(1) // the stopped write's connection is the one used next
	now := time.Now().UTC()
	for n := int64(0); n < 40; n++ {
		ctx := &failsAfter{Context: context.Background()}
		ctx.n.Store(n)
		part := storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: "c" + string(rune('a'+n%26)), TraceID: "t", OpName: "op", StartedAt: now}}
		_, _ = s.WriteCallOps(ctx, []storage.CallOp{{Part: &part}})
		// A whole-project read pages inside a transaction of its own.
		read := &failsAfter{Context: context.Background()}
		read.n.Store(n)
		for _, err := range s.QueryCalls(read, storage.CallsQuery{ProjectID: "e/p"}) {
			if err != nil {
				break
			}
		}
		done := make(chan error, 1)
		go func() { done <- s.CheckpointCalls(context.Background()) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("stopped after %d steps: checkpoint: %v", n, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("stopped after %d steps: the next checkpoint waited 20s; a transaction was left open", n)
		}
	}
}
