package duckdb

import (
	"context"
	"database/sql"
	"fmt"
)

// idFilter remembers which (project, call id) keys exist, so the writer
// can append brand-new calls with a plain insert and send only calls that
// may already have a row through the slower merge. Bloom filters have no
// false negatives, so a new key is never merged wrongly; a false positive
// only costs a merge. It is used under the store's write lock.
//
// It grows as a chain of filters, each twice the capacity of the one
// before and with half its false-positive rate, so the chain's rate stays
// under twice the first's. Rebuilding one larger filter from the stored
// keys instead stopped the writer for 12 s when a store passed 8M calls.
type idFilter struct {
	keys   keyHash
	stages []*blockBloom // the last takes new keys
	count  uint          // keys in the last stage
	// capacity and falseRate are the last stage's.
	capacity  uint
	falseRate float64
}

// A false positive sends a brand-new call through the merge, which scans
// the whole table: at 1% that happened in nearly every batch and made
// ingest slow down with the number of stored rows. At one in a million,
// about 40 bits a key, a batch of 100k new calls hits it one time in ten.
const (
	minFilterCapacity = 1 << 20
	filterFalseRate   = 1e-6
)

func newIDFilter(capacity uint) *idFilter {
	return newIDFilterSized(max(capacity, minFilterCapacity), filterFalseRate)
}

func newIDFilterSized(capacity uint, falseRate float64) *idFilter {
	f := &idFilter{keys: newKeyHash(), capacity: capacity, falseRate: falseRate}
	f.stages = []*blockBloom{newBlockBloom(f.capacity, f.falseRate)}
	return f
}

// hash hashes a key.
func (f *idFilter) hash(project, id string) uint64 { return f.keys.sum(project, id) }

// bytes is the memory the filter's stages hold.
func (f *idFilter) bytes() int64 {
	var n int64
	for _, s := range f.stages {
		n += int64(len(s.blocks)) * blockBits / 8
	}
	return n
}

func (f *idFilter) mayContain(project, id string) bool {
	h := f.hash(project, id)
	for _, stage := range f.stages {
		if stage.test(h) {
			return true
		}
	}
	return false
}

func (f *idFilter) add(project, id string) {
	if f.count >= f.capacity {
		f.capacity, f.falseRate, f.count = 2*f.capacity, f.falseRate/2, 0
		f.stages = append(f.stages, newBlockBloom(f.capacity, f.falseRate))
	}
	f.stages[len(f.stages)-1].add(f.hash(project, id))
	f.count++
}

// loadPageRows is how many rows loadCallKeys reads per query (but in
// tests): the driver holds a whole result in memory before the first row
// is read, and one query over 10M calls took 1.6 GB at startup.
const loadPageRows = 1 << 18

// loadCallKeys builds the id filter over every stored call key, sized for
// the store to double before it grows a stage, and records every started
// call in loc, in storage order. It runs before the store takes writes.
func loadCallKeys(ctx context.Context, q *sql.DB, loc *callLocator, pageRows int64) (*idFilter, error) {
	var n uint
	var last sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT count(*), max(rowid) FROM calls").Scan(&n, &last); err != nil {
		return nil, fmt.Errorf("count calls: %w", err)
	}
	f := newIDFilter(2 * n)
	for from := int64(0); last.Valid && from <= last.Int64; from += pageRows {
		if err := loadCallKeyPage(ctx, q, from, from+pageRows, f, loc); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// loadCallKeyPage loads the rows with row ids in [from, to); DuckDB skips
// the row groups outside them.
func loadCallKeyPage(ctx context.Context, q *sql.DB, from, to int64, f *idFilter, loc *callLocator) error {
	rows, err := q.QueryContext(ctx, "SELECT project_id, id, trace_id, started_at, has_start FROM calls"+
		" WHERE rowid >= $1 AND rowid < $2", from, to)
	if err != nil {
		return fmt.Errorf("load call ids: %w", err)
	}
	defer rows.Close()
	var project, id string
	var trace sql.NullString
	var started sql.NullTime
	var hasStart bool
	for rows.Next() {
		if err := rows.Scan(&project, &id, &trace, &started, &hasStart); err != nil {
			return fmt.Errorf("load call ids: %w", err)
		}
		f.add(project, id)
		if hasStart {
			loc.record(project, id, trace.String, started.Time)
		} else {
			loc.recordStartless(project, id)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load call ids: %w", err)
	}
	return nil
}
