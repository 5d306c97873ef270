package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// DefaultMemoryMB is DuckDB's buffer pool budget unless configured. With
// the Go heap's default limit (512 MiB) it keeps the process under 1 GiB
// through an ingest burst; the store sustains the same rate as with 512 MB
// since its transactions are bounded by decoded bytes.
const DefaultMemoryMB = 384

// Options size the embedded database. Zero values take the defaults.
type Options struct {
	// MemoryMB is DuckDB's buffer pool, in megabytes (at least 64).
	MemoryMB int
	// Threads is how many threads DuckDB runs queries and checkpoints
	// on. Zero: DefaultThreads.
	Threads int
	// CallsUnlogged skips DuckDB's write-ahead log for the calls table:
	// a committed call write is durable only once CheckpointCalls returns.
	// Only for a writer that keeps its own log of what it wrote since the
	// last checkpoint and replays it after a crash (the storage
	// exporter's). Every other table is durable at commit either way.
	CallsUnlogged bool
	// IndexBytes, when set, is told how many bytes the store's in-memory
	// index of call keys holds (the id filter and the locator, about 14
	// bytes a call) after it opens and as it grows, so the process can
	// keep its heap limit above it (internal/memlimit).
	IndexBytes func(bytes int64)

	// checkpointPatience replaces checkpointPatience (tests set it before
	// the store's background parts start, which read the guard).
	checkpointPatience time.Duration
}

// DefaultThreads leaves half the machine to the receivers. DuckDB's
// worker threads wait for tasks by spinning on a lock: on a 2-core machine
// shared with the ingest path, one thread stored the same spans with a
// quarter less CPU than two, while the read benchmarks stayed within their
// targets (single-call reads are unchanged; scans of a million calls take
// about twice as long).
func DefaultThreads() int { return max(1, runtime.NumCPU()/2) }

func (o Options) withDefaults() (Options, error) {
	if o.MemoryMB == 0 {
		o.MemoryMB = DefaultMemoryMB
	}
	if o.Threads == 0 {
		o.Threads = DefaultThreads()
	}
	if o.checkpointPatience == 0 {
		o.checkpointPatience = checkpointPatience
	}
	switch {
	case o.MemoryMB < 64:
		return o, fmt.Errorf("duckdb memory: %d MB is below the 64 MB minimum", o.MemoryMB)
	case o.Threads < 0:
		return o, fmt.Errorf("duckdb threads: %d is negative", o.Threads)
	}
	return o, nil
}

// configure applies the settings the write path was tuned with.
func configure(ctx context.Context, db *sql.DB, dir string, opts Options) error {
	settings := []struct{ sql, why string }{
		// Where a query that outgrows memory_limit spills: inside the data
		// directory, not DuckDB's default of a ".tmp" in whatever directory
		// the process started in.
		{"SET GLOBAL temp_directory = '" + strings.ReplaceAll(spillDir(dir), "'", "''") + "'", "temp_directory"},
		// A checkpoint runs inside the commit that crosses the WAL
		// threshold; DuckDB's 16 MB default made roughly every tenth ingest
		// batch pay for one. 128 MB keeps restart replay to a few seconds.
		{"SET GLOBAL checkpoint_threshold = '128MB'", "checkpoint_threshold"},
		// FSST, DuckDB's default string compression, spent two thirds of
		// the ingest CPU at checkpoints: with distinct text in every call
		// the store took 16k calls/s with it and 50-61k without it
		// (BenchmarkIngestOTelSpans), for about 60% more bytes on disk.
		// Strings are still dictionary-compressed where that pays.
		{"SET GLOBAL disabled_compression_methods = 'fsst'", "compression"},
		// DuckDB's buffer pool defaults to 80% of the machine's memory; a
		// collector shares its host, so it gets a fixed budget and spills
		// beyond it.
		{fmt.Sprintf("SET GLOBAL memory_limit = '%dMiB'", opts.MemoryMB), "memory_limit"},
		{fmt.Sprintf("SET GLOBAL threads = %d", opts.Threads), "threads"},
		// DuckDB's allocator keeps freed memory for reuse; under sustained
		// ingest that held the process near twice the buffer pool.
		// Flushing it after tasks that peaked above 64 MB, with background
		// threads that return it, keeps the resident size near the pool.
		{"SET GLOBAL allocator_flush_threshold = '64MB'", "allocator"},
		{"SET GLOBAL allocator_background_threads = true", "allocator"},
		// DuckDB rewrites ORDER BY ... LIMIT n (n <= 50) into a scan for
		// row ids joined back to the table, and a row-id join scans every
		// row group: reading one call by id took 9 ms warm on 10M calls,
		// 1.9 ms without it. Calls queries page in two phases themselves.
		{"SET GLOBAL late_materialization_max_rows = 0", "late_materialization"},
		// No vacuum tasks at checkpoints (DuckDB 1.5.6 runs up to 100,
		// compacting row groups that hold deleted rows). A checkpoint of
		// the calls file that vacuumed while a read scanned it made the
		// read miss rows it must see, with no error; the same race is the
		// likely source of the heap corruption that killed a center
		// taking an agent's backlog (ADR 0019). Merges deleted and
		// re-inserted rows until refs were kept as text (ADR 0021);
		// deletes and retention still leave such row groups. Without
		// vacuum the file holds what it did:
		// 100k merged calls, or 60k of them deleted, took the same bytes
		// and row groups either way.
		{"SET GLOBAL max_vacuum_tasks = 0", "max_vacuum_tasks"},
	}
	for _, set := range settings {
		if set.why == "temp_directory" && dir == "" {
			continue // an in-memory store keeps DuckDB's default
		}
		if _, err := db.ExecContext(ctx, set.sql); err != nil {
			return fmt.Errorf("configure duckdb %s: %w", set.why, err)
		}
	}
	return nil
}

// spillDir is where DuckDB spills the store in dir to.
func spillDir(dir string) string { return filepath.Join(dir, "spill") }
