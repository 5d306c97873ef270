package duckdb

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/bits-and-blooms/bloom/v3"
)

// locatorRun is how many started call parts one run of the locator
// covers: a row group (DuckDB's zone maps keep a minimum and maximum per
// row group), so a read by id usually touches one or two.
const locatorRun = rowGroupRows

// locatorFalseRate is each sealed filter's false-positive rate. A false
// positive adds one run's time range to a read; at one in ten thousand
// over the 600 runs of 10M calls a read by id scans an extra row group one
// time in sixteen.
const locatorFalseRate = 1e-4

// maxFilterHashes bounds the hash functions of a sealed filter (about 14
// at locatorFalseRate), so a key's locations are computed once per read.
const maxFilterHashes = 32

// maxLocatedIDs bounds the ids a read may name for the locator to narrow
// it; reads of more ids scan as before.
const maxLocatedIDs = 256

// maxLocatedRanges bounds the time ranges one read is narrowed to: beyond
// it the predicate costs more than the scan it saves.
const maxLocatedRanges = 16

// callLocator narrows reads of a few calls or traces by id to the time
// ranges that can hold them. The calls table has no index (one made every
// insert several times slower) and call and trace ids are random, so
// DuckDB's zone maps cannot skip a row group on an id; they can on
// started_at, which ingest writes in roughly ascending order. For each run
// of locatorRun started call parts, in the order they were stored, the
// locator keeps Bloom filters of their call and trace ids and the range of
// their start times. A call's row takes the start time of the last start
// part stored for it, and every start part is recorded, so the ranges of
// the runs whose filters may hold an id cover every row with that id.
//
// The writer records parts before it commits them, so a reader that can
// see a row also finds it here; a rolled-back record only widens a range.
type callLocator struct {
	seed     maphash.Seed
	runParts int // locatorRun but in tests
	mu       sync.RWMutex
	runs     []*locatorRunFilter // sealed, in storage order
	open     openRun
}

// locatorRunFilter is a sealed run.
type locatorRunFilter struct {
	calls, traces *bloom.BloomFilter
	span          timeSpan
}

// openRun is the run being filled: exact hashes, turned into Bloom
// filters sized to their count when it is sealed.
type openRun struct {
	calls, traces map[uint64]struct{}
	parts         int
	span          timeSpan
}

// timeSpan is a closed range of start times; unbounded when some start
// had no time, which no range predicate can select.
type timeSpan struct {
	lo, hi    time.Time
	set       bool
	unbounded bool
}

func (t *timeSpan) add(at time.Time) {
	switch {
	case at.IsZero():
		t.unbounded = true
	case !t.set:
		t.lo, t.hi, t.set = at, at, true
	case at.Before(t.lo):
		t.lo = at
	case at.After(t.hi):
		t.hi = at
	}
}

func newCallLocator(runParts int) *callLocator {
	l := &callLocator{seed: maphash.MakeSeed(), runParts: runParts}
	l.open.reset()
	return l
}

func (r *openRun) reset() {
	*r = openRun{calls: make(map[uint64]struct{}), traces: make(map[uint64]struct{})}
}

// key hashes a project-scoped id.
func (l *callLocator) key(project, id string) uint64 { return projectIDHash(l.seed, project, id) }

// record notes a start part about to be stored.
func (l *callLocator) record(project, id, traceID string, started time.Time) {
	c, t := l.key(project, id), l.key(project, traceID)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open.calls[c] = struct{}{}
	l.open.traces[t] = struct{}{}
	l.open.span.add(started)
	if l.open.parts++; l.open.parts >= l.runParts {
		l.runs = append(l.runs, l.open.seal())
		l.open.reset()
	}
}

func (r *openRun) seal() *locatorRunFilter {
	return &locatorRunFilter{calls: filterOf(r.calls), traces: filterOf(r.traces), span: r.span}
}

func filterOf(keys map[uint64]struct{}) *bloom.BloomFilter {
	f := bloom.NewWithEstimates(uint(max(len(keys), 1)), locatorFalseRate)
	var b [8]byte
	for k := range keys {
		binary.LittleEndian.PutUint64(b[:], k)
		f.Add(b[:])
	}
	return f
}

// startedWithin returns the time ranges within which every stored call
// of the project with one of ids (call ids, or trace ids with traces)
// started, merged and sorted. ok is false when the locator cannot narrow
// the read: too many ids or ranges, or a start without a time.
func (l *callLocator) startedWithin(project string, ids []string, traces bool) (spans []timeSpan, ok bool) {
	if len(ids) == 0 || len(ids) > maxLocatedIDs {
		return nil, false
	}
	keys := make([]uint64, len(ids))
	locs := make([][]uint64, len(ids))
	var b [8]byte
	for i, id := range ids {
		keys[i] = l.key(project, id)
		binary.LittleEndian.PutUint64(b[:], keys[i])
		locs[i] = bloom.Locations(b[:], maxFilterHashes)
	}
	l.mu.RLock()
	for _, r := range l.runs {
		if r.mayHold(locs, traces) {
			spans = append(spans, r.span)
		}
	}
	if l.open.holds(keys, traces) {
		spans = append(spans, l.open.span)
	}
	l.mu.RUnlock()
	return mergeSpans(spans)
}

// mayHold tests keys by their filter locations (bloom.Locations with
// maxFilterHashes; a filter uses the first K of them).
func (r *locatorRunFilter) mayHold(locs [][]uint64, traces bool) bool {
	f := r.calls
	if traces {
		f = r.traces
	}
	for _, l := range locs {
		if f.TestLocations(l[:min(f.K(), maxFilterHashes)]) {
			return true
		}
	}
	return false
}

func (r *openRun) holds(keys []uint64, traces bool) bool {
	set := r.calls
	if traces {
		set = r.traces
	}
	for _, k := range keys {
		if _, ok := set[k]; ok {
			return true
		}
	}
	return false
}

// mergeSpans sorts spans and joins overlapping ones.
func mergeSpans(spans []timeSpan) ([]timeSpan, bool) {
	out := spans[:0]
	for _, s := range spans {
		if s.unbounded {
			return nil, false
		}
		if s.set {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b timeSpan) int { return a.lo.Compare(b.lo) })
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && !s.lo.After(merged[n-1].hi) {
			if s.hi.After(merged[n-1].hi) {
				merged[n-1].hi = s.hi
			}
			continue
		}
		merged = append(merged, s)
	}
	if len(merged) > maxLocatedRanges {
		return nil, false
	}
	return merged, true
}
