package duckdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestCallsGuard: a checkpoint runs with no read running; reads that
// arrive while it waits or runs wait for it (or for their context); a
// paged read puts off a checkpoint that may be put off, and is stopped
// by one that may not once patience has passed.
func TestCallsGuard(t *testing.T) {
	ctx := context.Background()
	t.Run("checkpoint waits for a statement, new reads wait for it", func(t *testing.T) {
		g := newCallsGuard(time.Hour)
		if err := g.enter(ctx); err != nil {
			t.Fatal(err)
		}
		var ran atomic.Bool
		done := make(chan error)
		go func() { done <- g.checkpoint(func() error { ran.Store(true); return nil }) }()
		waitUntil(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.closed })
		waitCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := g.enter(waitCtx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a read entered beside a pending checkpoint: %v", err)
		}
		if ran.Load() {
			t.Fatal("the checkpoint ran beside a statement")
		}
		g.leave()
		if err := <-done; err != nil || !ran.Load() {
			t.Fatalf("checkpoint: ran %v, %v", ran.Load(), err)
		}
		if err := g.enter(ctx); err != nil {
			t.Fatalf("a read after the checkpoint: %v", err)
		}
		g.leave()
	})
	t.Run("a paged read puts off a checkpoint that may be put off", func(t *testing.T) {
		g := newCallsGuard(time.Hour)
		_, release, err := g.hold(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if done, err := g.tryCheckpoint(func() error { t.Error("ran beside a paged read"); return nil }); done || err != nil {
			t.Fatalf("tryCheckpoint = %v, %v", done, err)
		}
		release()
		ran := false
		if done, err := g.tryCheckpoint(func() error { ran = true; return nil }); !done || err != nil || !ran {
			t.Fatalf("tryCheckpoint after the read = %v, %v (ran %v)", done, err, ran)
		}
	})
	t.Run("a checkpoint stops a paged read after patience", func(t *testing.T) {
		g := newCallsGuard(20 * time.Millisecond)
		readCtx, release, err := g.hold(ctx)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() { done <- g.checkpoint(func() error { return nil }) }()
		<-readCtx.Done()
		if err := stoppedErr(readCtx); !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("the read ended with %v, want the checkpoint's stop", err)
		}
		select {
		case <-done:
			t.Fatal("the checkpoint ran before the stopped read let go")
		case <-time.After(20 * time.Millisecond):
		}
		release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

// TestSlowPagedReadIsStoppedNotWaitedFor: a whole-project read its client
// consumes slowly puts off checkpoints that may wait; one that cannot
// stops it after patience with an error that says so, instead of holding
// every other read and write behind it. The rows it gave were whole.
func TestSlowPagedReadIsStoppedNotWaitedFor(t *testing.T) {
	ctx := context.Background()
	s, err := OpenWithOptions(ctx, t.TempDir(), Options{CallsUnlogged: true, checkpointPatience: 100 * time.Millisecond},
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.pageSize = 5
	writeStarts(t, s, 40)
	var rows int
	var readErr error
	checkpointed := make(chan error, 1)
	for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p"}) {
		if err != nil {
			readErr = err
			break
		}
		if want := fmt.Sprintf("c%02d", rows); c.ID != want {
			t.Fatalf("row %d is %s, want %s", rows, c.ID, want)
		}
		rows++
		if rows == 2 {
			if done, err := s.TryCheckpointCalls(ctx); done || err != nil {
				t.Fatalf("TryCheckpointCalls beside a paged read = %v, %v", done, err)
			}
			go func() { checkpointed <- s.CheckpointCalls(ctx) }()
			time.Sleep(time.Second) // a slow client: past the checkpoint's patience
		}
	}
	if !errors.Is(readErr, storage.ErrUnavailable) {
		t.Fatalf("the slow read ended after %d rows with %v, want a stop for the checkpoint", rows, readErr)
	}
	if rows >= 40 {
		t.Fatalf("the read ran to its end (%d rows): the checkpoint waited for it", rows)
	}
	if err := <-checkpointed; err != nil {
		t.Fatal(err)
	}
	if done, err := s.TryCheckpointCalls(ctx); !done || err != nil {
		t.Fatalf("TryCheckpointCalls with no read = %v, %v", done, err)
	}
}
