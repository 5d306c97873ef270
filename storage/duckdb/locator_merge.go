package duckdb

import (
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// maxStartless bounds the rows without a start the locator remembers one
// by one. Such rows are rare (an end, a rename or a delete that arrived
// before its call's start); past the bound, merges are no longer narrowed.
const maxStartless = 1 << 18

// maxMergeRanges bounds the start-time ranges a merge is narrowed to:
// each is a scan of its own (sqlgen.StartedWithin).
const maxMergeRanges = 8

// startlessRows remembers the rows stored without a start. Their
// started_at is not a start the locator recorded (NULL, or the time a
// rename or delete placed the row), so a merge into one cannot be
// narrowed by start time.
type startlessRows struct {
	keys     map[uint64]struct{}
	overflow bool // more than maxStartless: any row may be one
}

// recordStartless notes a row about to be stored without a start. A
// row that later gains one stays noted: that only leaves its merges
// unnarrowed.
func (l *callLocator) recordStartless(project, id string) {
	k := l.key(project, id)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.startless.overflow:
	case len(l.startless.keys) >= maxStartless:
		l.startless.overflow, l.startless.keys = true, nil
	default:
		if l.startless.keys == nil {
			l.startless.keys = make(map[uint64]struct{})
		}
		l.startless.keys[k] = struct{}{}
	}
}

// mergeWithin returns the start-time ranges that hold every stored row
// that parts (of known calls, about to be merged) can match, so that the
// merge reads only those blocks; ok is false when they cannot be
// narrowed: a row stored without a start, an id the locator cannot place,
// or ranges too many to pay. The parts' own start parts must have been
// recorded already (appendParts does so first).
func (l *callLocator) mergeWithin(parts []storage.CallOp) (ranges []sqlgen.TimeRange, ok bool) {
	byProject := make(map[string][]string)
	for _, op := range parts {
		c := &op.Part.Call
		byProject[c.ProjectID] = append(byProject[c.ProjectID], c.ID)
	}
	for project, ids := range byProject {
		r, ok := l.rowsWithin(project, ids)
		if !ok {
			return nil, false
		}
		ranges = append(ranges, r...)
	}
	return coarsen(ranges, maxMergeRanges), true
}

// rowsWithin returns the start-time ranges that hold every stored row of
// the project with one of ids, whether stored with a start or not, padded
// by the store's rounding; ok is false when the locator cannot say.
func (l *callLocator) rowsWithin(project string, ids []string) (ranges []sqlgen.TimeRange, ok bool) {
	l.mu.RLock()
	if l.startless.overflow {
		l.mu.RUnlock()
		return nil, false
	}
	for _, id := range ids {
		if _, ok := l.startless.keys[l.key(project, id)]; ok {
			l.mu.RUnlock()
			return nil, false
		}
	}
	l.mu.RUnlock()
	for chunk := range slices.Chunk(ids, maxLocatedIDs) {
		r, ok := l.startedWithin(project, chunk, false)
		if !ok {
			return nil, false
		}
		ranges = append(ranges, r...)
	}
	return widen(ranges), true
}

// widen pads each range by the store's rounding: it keeps microseconds,
// and a millisecond each side covers any rounding (sqlgen.MergeRanges
// joins ranges this makes overlap).
func widen(ranges []sqlgen.TimeRange) []sqlgen.TimeRange {
	for i := range ranges {
		ranges[i].From, ranges[i].To = ranges[i].From.Add(-time.Millisecond), ranges[i].To.Add(time.Millisecond)
	}
	return ranges
}

// coarsen merges ranges, then joins the two closest while more than n
// remain: a wider range still holds every row, it only reads more.
func coarsen(ranges []sqlgen.TimeRange, n int) []sqlgen.TimeRange {
	out := sqlgen.MergeRanges(ranges)
	for len(out) > max(n, 1) {
		closest := 0
		for i := 1; i < len(out)-1; i++ {
			if out[i+1].From.Sub(out[i].To) < out[closest+1].From.Sub(out[closest].To) {
				closest = i
			}
		}
		out[closest].To = out[closest+1].To
		out = slices.Delete(out, closest+1, closest+2)
	}
	return out
}
