package duckdb

import (
	"sync"
	"time"
	"unsafe"

	"github.com/weftdev/weft/storage/sqlgen"
)

// locatorRun is how many started call parts one run of the locator
// covers: a row group (DuckDB's zone maps keep a minimum and maximum per
// row group).
const locatorRun = rowGroupRows

// locatorSlice is how many started call parts of a run share one time
// range: a DuckDB vector. DuckDB filters a vector on started_at before it
// reads the vector's other columns, so a range that selects one vector
// spares comparing the ids of the rest of the row group and, above all,
// decompressing their inputs and outputs.
const locatorSlice = 2048

// locatorFalseRate is each slice filter's false-positive rate. A false
// positive adds one slice's time range to a read; over the ~5,000 slices
// of 10M calls a read by id scans an extra vector one time in ten.
const locatorFalseRate = 2e-5

// maxLocatedIDs bounds the ids a read may name for the locator to narrow
// it; reads of more ids scan as before.
const maxLocatedIDs = 256

// maxLocatedRanges bounds the time ranges one read is narrowed to: beyond
// it the range scans cost more than the scan they save. Each range is a
// scan of its own (sqlgen.RangeScans); on 10M calls 16 ids spread over a
// day located to some 30 ranges took 40 ms this way against 650 ms
// scanning, and 50 such ids 400 ms against 700 ms.
const maxLocatedRanges = 64

// callLocator narrows reads of a few calls or traces by id to the time
// ranges that can hold them. The calls table has no index (one made every
// insert several times slower) and OTel's span and trace ids are random,
// so DuckDB's zone maps cannot skip data on an id; they can on
// started_at, which ingest writes in roughly ascending order. For each
// slice of locatorSlice started call parts, in the order they were
// stored, the locator keeps Bloom filters of their call and trace ids and
// the range of their start times. A call's row takes the start time of
// the last start part stored for it, and every start part is recorded, so
// the ranges of the slices whose filters may hold an id cover every row
// with that id.
//
// The writer records parts before it commits them, so a reader that can
// see a row also finds it here; a rolled-back record only widens a range.
type callLocator struct {
	keys       keyHash
	runParts   int     // locatorRun but in tests
	sliceSize  int     // locatorSlice but in tests
	bitsPerKey float64 // blockLayout(locatorFalseRate)
	k          uint32
	mu         sync.RWMutex
	runs       []*sealedRun // in storage order
	sealed     int64        // bytes the runs hold
	open       openRun
	startless  startlessRows
}

// sealedRun is a full run: a filter per slice and kind of id.
type sealedRun struct {
	calls, traces *slicedBloom
	spans         []timeSpan // per slice
}

// openRun is the run being filled: exact hashes per slice, turned into
// filters sized to their count when the run is sealed.
type openRun struct {
	calls, traces []map[uint64]struct{}
	spans         []timeSpan
	parts         int
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

func newCallLocator(runParts, sliceSize int) *callLocator {
	l := &callLocator{keys: newKeyHash(), runParts: runParts, sliceSize: max(min(sliceSize, runParts), 1)}
	l.bitsPerKey, l.k = blockLayout(locatorFalseRate)
	return l
}

// key hashes a project-scoped id.
func (l *callLocator) key(project, id string) uint64 { return l.keys.sum(project, id) }

// record notes a start part about to be stored.
func (l *callLocator) record(project, id, traceID string, started time.Time) {
	c, t := l.key(project, id), l.key(project, traceID)
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &l.open
	if r.parts%l.sliceSize == 0 {
		r.calls = append(r.calls, make(map[uint64]struct{}))
		r.traces = append(r.traces, make(map[uint64]struct{}))
		r.spans = append(r.spans, timeSpan{})
	}
	last := len(r.spans) - 1
	r.calls[last][c] = struct{}{}
	r.traces[last][t] = struct{}{}
	r.spans[last].add(started)
	if r.parts++; r.parts >= l.runParts {
		l.seal(&sealedRun{
			calls:  newSlicedBloom(r.calls, l.bitsPerKey, l.k),
			traces: newSlicedBloom(r.traces, l.bitsPerKey, l.k),
			spans:  r.spans,
		})
		*r = openRun{}
	}
}

// seal adds a full run; the caller holds mu for writing, or l is not
// shared yet.
func (l *callLocator) seal(r *sealedRun) {
	l.runs = append(l.runs, r)
	l.sealed += int64(r.calls.bytes()+r.traces.bytes()) + int64(len(r.spans))*int64(unsafe.Sizeof(timeSpan{}))
}

// bytes is about the memory the locator holds: its sealed runs' filters
// and spans, and the open run's hashes.
func (l *callLocator) bytes() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.sealed + int64(l.open.parts)*2*16 // two hashes a part, with the map's overhead
}

// startedWithin returns the time ranges within which every stored call
// of the project with one of ids (call ids, or trace ids with traces)
// started, merged and sorted. ok is false when the locator cannot narrow
// the read: too many ids or ranges, or a start without a time.
func (l *callLocator) startedWithin(project string, ids []string, traces bool) ([]sqlgen.TimeRange, bool) {
	if len(ids) == 0 || len(ids) > maxLocatedIDs {
		return nil, false
	}
	keys := make([]uint64, len(ids))
	for i, id := range ids {
		keys[i] = l.key(project, id)
	}
	var spans []timeSpan
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, r := range l.runs {
		f := r.calls
		if traces {
			f = r.traces
		}
		for _, k := range keys {
			f.matching(k, func(slice int) { spans = append(spans, r.spans[slice]) })
		}
		if len(spans) > maxLocatedIDs*maxLocatedRanges { // merging cannot bring these under the bound
			return nil, false
		}
	}
	spans = append(spans, l.open.holding(keys, traces)...)
	return located(spans)
}

// holding returns the spans of the open run's slices that hold any of keys.
func (r *openRun) holding(keys []uint64, traces bool) []timeSpan {
	sets := r.calls
	if traces {
		sets = r.traces
	}
	var out []timeSpan
	for s, set := range sets {
		for _, k := range keys {
			if _, ok := set[k]; ok {
				out = append(out, r.spans[s])
				break
			}
		}
	}
	return out
}

// located turns spans into sorted, disjoint ranges; ok is false when a
// span is unbounded or they are too many.
func located(spans []timeSpan) (ranges []sqlgen.TimeRange, ok bool) {
	ranges = make([]sqlgen.TimeRange, 0, len(spans))
	for _, s := range spans {
		if s.unbounded {
			return nil, false
		}
		if s.set {
			ranges = append(ranges, sqlgen.TimeRange{From: s.lo, To: s.hi})
		}
	}
	ranges = sqlgen.MergeRanges(ranges)
	if len(ranges) > maxLocatedRanges {
		return nil, false
	}
	return ranges, true
}
