package clickhouse

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// versionClock hands out ReplacingMergeTree versions: the wall clock in
// nanoseconds, strictly increasing within the process and always above
// the version a write was merged from, so the merged row wins even when
// another process's clock ran ahead.
type versionClock struct {
	mu   sync.Mutex
	last uint64
	now  func() time.Time
}

// next returns a version greater than after and than every earlier one.
func (c *versionClock) next(after uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := max(uint64(max(c.now().UnixNano(), 0)), c.last+1, after+1)
	c.last = v
	return v
}

// lockStripes is the number of project locks; projects share a stripe by
// hash, which only costs parallelism between them.
const lockStripes = 64

// projectLocks serialises read-merge-insert per project within the
// process: two concurrent writes of parts of one call would otherwise both
// merge with the same stored row and the later version would drop the
// other's side.
type projectLocks struct {
	seed    maphash.Seed
	once    sync.Once
	stripes [lockStripes]sync.Mutex
}

// lock takes the stripes of projects in index order (so concurrent
// callers cannot deadlock) and returns the function that releases them.
func (l *projectLocks) lock(projects []string) func() {
	l.once.Do(func() { l.seed = maphash.MakeSeed() })
	idx := make([]int, 0, len(projects))
	for _, p := range projects {
		idx = append(idx, int(maphash.String(l.seed, p)%lockStripes))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		l.stripes[i].Lock()
	}
	return func() {
		for _, i := range slices.Backward(idx) {
			l.stripes[i].Unlock()
		}
	}
}
