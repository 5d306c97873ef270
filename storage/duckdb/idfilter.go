package duckdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/bits-and-blooms/bloom/v3"
)

// idFilter remembers which (project, call id) keys exist, so the writer
// can append brand-new calls with a plain insert and send only calls that
// may already have a row through the slower merge. A Bloom filter has no
// false negatives, so a new key is never merged wrongly; a false positive
// only costs a merge. It is used under the store's write lock.
type idFilter struct {
	f        *bloom.BloomFilter
	count    uint
	capacity uint
}

// A false positive sends a brand-new call through the merge, which scans
// the whole table: at 1% that happened in nearly every batch and made
// ingest slow down with the number of stored rows. At one in a million,
// about 29 bits a key, a batch of 100k new calls hits it one time in ten.
const (
	minFilterCapacity = 1 << 20
	filterFalseRate   = 1e-6
)

func newIDFilter(capacity uint) *idFilter {
	capacity = max(capacity, minFilterCapacity)
	return &idFilter{f: bloom.NewWithEstimates(capacity, filterFalseRate), capacity: capacity}
}

func filterKey(project, id string) []byte {
	k := make([]byte, 0, len(project)+1+len(id))
	k = append(k, project...)
	k = append(k, 0)
	return append(k, id...)
}

func (f *idFilter) mayContain(project, id string) bool {
	return f.f.Test(filterKey(project, id))
}

func (f *idFilter) add(project, id string) {
	f.f.Add(filterKey(project, id))
	f.count++
}

// full reports that the filter holds more keys than it was sized for and
// its false-positive rate is climbing; the store then rebuilds it larger.
func (f *idFilter) full() bool { return f.count > f.capacity }

// loadCallKeys builds the id filter over every stored call key and, with loc,
// records every started call in the locator, in storage order.
func loadCallKeys(ctx context.Context, q *sql.DB, loc *callLocator) (*idFilter, error) {
	var n uint
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM calls").Scan(&n); err != nil {
		return nil, fmt.Errorf("count calls: %w", err)
	}
	f := newIDFilter(2 * n)
	cols := "project_id, id, NULL, NULL, false"
	if loc != nil {
		cols = "project_id, id, trace_id, started_at, has_start"
	}
	rows, err := q.QueryContext(ctx, "SELECT "+cols+" FROM calls")
	if err != nil {
		return nil, fmt.Errorf("load call ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var project, id string
		var trace sql.NullString
		var started sql.NullTime
		var hasStart bool
		if err := rows.Scan(&project, &id, &trace, &started, &hasStart); err != nil {
			return nil, fmt.Errorf("load call ids: %w", err)
		}
		f.add(project, id)
		if hasStart {
			loc.record(project, id, trace.String, started.Time)
		}
	}
	return f, rows.Err()
}
