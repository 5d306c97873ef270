// Package memlimit keeps the Go heap's soft limit
// (runtime/debug.SetMemoryLimit) at a working budget plus the bytes that
// long-lived in-memory indexes hold. Without a limit the collector lets
// the heap grow to twice what is live, which under an ingest burst put the
// process over a gigabyte; with a fixed one, a store whose indexes grew
// past it (the DuckDB store's call keys are about 14 bytes a call, 560 MB
// at 40M calls) left the collector running without pause, and ingest fell
// to a third.
package memlimit

import (
	"runtime/debug"
	"sync"
)

// Budget is what the process may allocate beyond its indexes before the
// collector works harder: requests, batches and caches. The embedded
// store's buffer pool (384 MiB by default) is outside the Go heap.
const Budget = 512 << 20

// Limit sets the soft limit to Budget plus the reserved bytes, unless the
// user set GOMEMLIMIT, which the runtime then keeps.
type Limit struct {
	mu       sync.Mutex
	userSet  bool
	reserved int64
	set      func(int64) int64
}

// New applies the limit; getenv reads GOMEMLIMIT.
func New(getenv func(string) string) *Limit {
	l := &Limit{userSet: getenv("GOMEMLIMIT") != "", set: debug.SetMemoryLimit}
	l.apply()
	return l
}

// Reserve records that indexes now hold bytes (replacing what was
// reserved before) and moves the limit with them.
func (l *Limit) Reserve(bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved = max(bytes, 0)
	l.apply()
}

// Bytes is the soft limit the process runs under; 0 when the user's
// GOMEMLIMIT decides it.
func (l *Limit) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.userSet {
		return 0
	}
	return Budget + l.reserved
}

func (l *Limit) apply() {
	if !l.userSet {
		l.set(Budget + l.reserved)
	}
}
