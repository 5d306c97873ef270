package duckdb

import (
	"context"
	"database/sql"
	"sync"
)

// callsGuard keeps a checkpoint of the calls file from running while calls
// are read. On DuckDB 1.5.6 a read statement whose scan overlapped a
// checkpoint of row groups that merges had rewritten could end without an
// error and without some of its rows (a page of 700 with none, a trace
// missing calls); run apart, the same statements are whole (see
// docs/adr/0020-checkpoints-apart-from-reads.md).
//
// Reads share the guard; a checkpoint takes it alone, so it waits for the
// reads running and holds off new ones. A statement run on its own holds
// the guard while it executes: DuckDB materialises a result before the
// first row is returned, so iterating it at a client's pace reads no
// table. A paged read holds the guard for its whole transaction instead:
// FORCE CHECKPOINT waits for every transaction older than the last commit
// to end, so a transaction that waited for the guard between pages while
// a checkpoint held it would never end. A holder of the guard must not
// take it again (sync.RWMutex read locks do not nest once a checkpoint
// waits).
type callsGuard struct {
	mu sync.RWMutex
}

// hold takes the guard for a read that runs several statements; the
// caller calls release once it has ended its transaction.
func (g *callsGuard) hold() (release func()) {
	g.mu.RLock()
	return g.mu.RUnlock
}

// guarded returns db with each statement holding the guard while it
// executes.
func (g *callsGuard) guarded(db queryer) queryer { return guardedQueryer{g, db} }

// checkpoint runs f, a checkpoint of the calls file, with no read of
// calls running.
func (g *callsGuard) checkpoint(f func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return f()
}

type guardedQueryer struct {
	g  *callsGuard
	db queryer
}

func (q guardedQueryer) QueryContext(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	q.g.mu.RLock()
	defer q.g.mu.RUnlock()
	return q.db.QueryContext(ctx, text, args...)
}
