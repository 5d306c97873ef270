package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weftdev/weft/storage"
)

// callsGuard keeps a checkpoint of the calls file from running while calls
// are read. On DuckDB 1.5.6 a read statement whose scan overlapped a
// checkpoint of row groups that merges had rewritten could end without an
// error and without some of its rows (a page of 700 with none, a trace
// missing calls); run apart, the same statements are whole (see
// docs/adr/0020-checkpoints-apart-from-reads.md).
//
// A statement run on its own holds the guard while it executes: DuckDB
// materialises a result before the first row is returned, so iterating it
// at a client's pace reads no table. A paged read holds it for its whole
// transaction, which the client's pace stretches: FORCE CHECKPOINT waits
// for every transaction older than the last commit to end, so one that
// waited for the guard between pages while a checkpoint held it would
// never end. A checkpoint closes the guard to new reads, waits for those
// running, and runs alone; one that cannot wait (checkpoint) stops the
// paged reads still running after patience, so no client can hold
// checkpoints, and with them every read queued behind one, for longer.
//
// Once a commit of call writes has failed, it refuses every read and
// checkpoint (failed): see commit.
type callsGuard struct {
	patience time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed (and replaced) when readers or closed change
	readers int           // statements and paged reads running
	closed  bool          // a checkpoint waits or runs: new reads wait
	paged   map[*pagedRead]struct{}
	failed  error // set once a commit failed: every read and checkpoint is refused
}

// pagedRead is a paged read holding the guard, which a checkpoint may stop.
type pagedRead struct{ stop context.CancelCauseFunc }

// errReadStopped is the cause a paged read is stopped with.
var errReadStopped = fmt.Errorf("a checkpoint of the calls file could not wait longer for this read; retry it: %w", storage.ErrUnavailable)

// checkpointPatience is how long a checkpoint that cannot be put off
// waits for paged reads before it stops them: long enough for a page or
// two, short enough that reads queued behind the checkpoint (and the
// writes waiting for it) see a pause, not an outage.
const checkpointPatience = 5 * time.Second

func newCallsGuard(patience time.Duration) *callsGuard {
	return &callsGuard{patience: patience, changed: make(chan struct{}), paged: map[*pagedRead]struct{}{}}
}

// signal wakes every waiter; g.mu is held.
func (g *callsGuard) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// enter waits until no checkpoint holds the guard and counts a reader.
func (g *callsGuard) enter(ctx context.Context) error {
	for {
		g.mu.Lock()
		if err := g.failed; err != nil {
			g.mu.Unlock()
			return err
		}
		if !g.closed {
			g.readers++
			g.mu.Unlock()
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// commit runs f, the COMMIT of a write transaction of calls. On DuckDB
// 1.5.6 a commit that fails part way (out of memory pinning the
// transaction's undo buffer, reads beside it having filled the pool with
// blocks they pin) frees the versions of the rows it updated while the
// table still points at them: the next read of those rows dereferences
// freed memory and the process dies natively (SIGSEGV in
// duckdb::UndoBufferPointer::Pin; upstream duckdb/duckdb#26019, see
// docs/adr/0024-a-failed-commit-fails-the-store.md). So when f fails, the
// guard fails: no read or checkpoint of the table starts again in this
// process, and the error says why.
//
// Reads are not kept apart from commits: holding every commit until the
// statements running when it came had ended made each commit wait for the
// longest read, and reads queued behind it, so that a restarted center
// stored its log at 25 records/s under the soak's reads.
func (g *callsGuard) commit(f func() error) error {
	if err := g.err(); err != nil {
		return err
	}
	if err := f(); err != nil {
		g.fail(err)
		return g.err()
	}
	return nil
}

// fail refuses every read and checkpoint from now on, with an error that
// wraps cause and storage.ErrUnavailable; the first failure is kept.
func (g *callsGuard) fail(cause error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed == nil {
		g.failed = fmt.Errorf("the calls table cannot be used until weft is started again (a commit failed: %w): %w", cause, storage.ErrUnavailable)
		g.signal()
	}
}

// err is the guard's failure, nil while it works.
func (g *callsGuard) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failed
}

func (g *callsGuard) leave() {
	g.mu.Lock()
	g.readers--
	g.signal()
	g.mu.Unlock()
}

// hold takes the guard for a read that runs several statements in one
// transaction. The read runs on the returned context, which a checkpoint
// that could wait no longer cancels (stoppedErr reports it); release ends
// the hold once the transaction has ended.
func (g *callsGuard) hold(ctx context.Context) (context.Context, func(), error) {
	if err := g.enter(ctx); err != nil {
		return nil, nil, err
	}
	ctx, stop := context.WithCancelCause(ctx)
	r := &pagedRead{stop: stop}
	g.mu.Lock()
	g.paged[r] = struct{}{}
	g.mu.Unlock()
	return ctx, func() {
		g.mu.Lock()
		delete(g.paged, r)
		g.mu.Unlock()
		stop(context.Canceled)
		g.leave()
	}, nil
}

// stoppedErr is the error a read on ctx ends with when a checkpoint
// stopped it, nil otherwise.
func stoppedErr(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errReadStopped) {
		return errReadStopped
	}
	return nil
}

// guarded returns db with each statement holding the guard while it
// executes.
func (g *callsGuard) guarded(db queryer) queryer { return guardedQueryer{g, db} }

// tryCheckpoint runs f, a checkpoint of the calls file, with no read of
// calls running, unless a paged read is running: then it returns false
// at once, having run nothing.
func (g *callsGuard) tryCheckpoint(f func() error) (bool, error) {
	g.mu.Lock()
	if g.failed != nil {
		err := g.failed
		g.mu.Unlock()
		return false, err
	}
	if len(g.paged) > 0 || g.closed {
		g.mu.Unlock()
		return false, nil
	}
	g.closed = true
	g.mu.Unlock()
	return true, g.run(f, 0)
}

// checkpoint runs f, a checkpoint of the calls file, with no read of
// calls running, stopping the paged reads still running after patience.
func (g *callsGuard) checkpoint(f func() error) error {
	for {
		g.mu.Lock()
		if g.failed != nil {
			err := g.failed
			g.mu.Unlock()
			return err
		}
		if !g.closed {
			g.closed = true
			g.mu.Unlock()
			return g.run(f, g.patience)
		}
		ch := g.changed // another checkpoint runs: wait for it
		g.mu.Unlock()
		<-ch
	}
}

// run waits for the readers to end, stopping paged reads after patience
// (never, when it is 0: none ran when the guard closed), runs f and opens
// the guard again. The guard is closed.
func (g *callsGuard) run(f func() error, patience time.Duration) error {
	defer func() {
		g.mu.Lock()
		g.closed = false
		g.signal()
		g.mu.Unlock()
	}()
	var deadline <-chan time.Time
	if patience > 0 {
		t := time.NewTimer(patience)
		defer t.Stop()
		deadline = t.C
	}
	for {
		g.mu.Lock()
		if err := g.failed; err != nil {
			g.mu.Unlock()
			return err
		}
		if g.readers == 0 {
			g.mu.Unlock()
			return f()
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			deadline = nil
			g.mu.Lock()
			for r := range g.paged {
				r.stop(errReadStopped)
			}
			g.mu.Unlock()
		}
	}
}

type guardedQueryer struct {
	g  *callsGuard
	db queryer
}

func (q guardedQueryer) QueryContext(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if err := q.g.enter(ctx); err != nil {
		return nil, err
	}
	defer q.g.leave()
	return checkedQueryer(q).QueryContext(ctx, text, args...)
}

// checked returns db, on which the caller already holds the guard (a
// paged read's transaction), with each statement refused once the guard
// has failed.
func (g *callsGuard) checked(db queryer) queryer { return checkedQueryer{g, db} }

type checkedQueryer struct {
	g  *callsGuard
	db queryer
}

func (q checkedQueryer) QueryContext(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	// A commit that failed since the read began left rows no statement
	// may read.
	if err := q.g.err(); err != nil {
		return nil, err
	}
	return q.db.QueryContext(ctx, text, args...)
}
