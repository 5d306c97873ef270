package duckdb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"

	// Registers the "duckdb" database/sql driver.
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/weftdev/weft/storage"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultMemoryMB is DuckDB's buffer pool budget unless configured. With
// the Go heap's default limit (512 MiB) it keeps the process under 1 GiB
// through an ingest burst; the store sustains the same rate as with 512 MB
// since its transactions are bounded by decoded bytes.
const DefaultMemoryMB = 384

// FileName is the database file inside the data directory.
const FileName = "weft.duckdb"

// Store is the DuckDB backend.
type Store struct {
	db     *sql.DB
	logger *slog.Logger
	// writeMu serialises write transactions: DuckDB allows one writer and
	// conflicting concurrent writers abort instead of waiting.
	writeMu sync.Mutex
	ids     *idFilter // guarded by writeMu
	// blobDir holds file contents by digest (see migrations/0004_files.sql).
	blobDir string
	// ownsBlobDir: an in-memory store made a temp dir that Close removes.
	ownsBlobDir bool
	// pageSize is how many calls one read query materialises.
	pageSize int64
	// dumps compresses raw OTel spans (see dump.go).
	dumps *dumpCodec
}

// Open opens (creating if needed) the database in dir and applies pending
// migrations. An empty dir opens an in-memory database (tests only).
func Open(ctx context.Context, dir string, logger *slog.Logger) (*Store, error) {
	return OpenWithMemory(ctx, dir, DefaultMemoryMB, logger)
}

// OpenWithMemory is Open with a buffer pool of memoryMB megabytes.
func OpenWithMemory(ctx context.Context, dir string, memoryMB int, logger *slog.Logger) (*Store, error) {
	if memoryMB < 64 {
		return nil, fmt.Errorf("duckdb memory: %d MB is below the 64 MB minimum", memoryMB)
	}
	dsn := ""
	if dir != "" {
		dsn = filepath.Join(dir, FileName)
	}
	db, err := sql.Open("duckdb", dsn)
	if err != nil {
		return nil, fmt.Errorf("open duckdb %q: %w", dsn, err)
	}
	dumps, err := newDumpCodec()
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	s := &Store{db: db, logger: logger, blobDir: filepath.Join(dir, "files"), pageSize: readPageSize, dumps: dumps}
	if dir == "" {
		if s.blobDir, err = os.MkdirTemp("", "weft-files-"); err != nil {
			return nil, errors.Join(err, db.Close())
		}
		s.ownsBlobDir = true
	} else if err := os.MkdirAll(s.blobDir, 0o700); err != nil {
		return nil, errors.Join(fmt.Errorf("files dir: %w", err), db.Close())
	}
	// A checkpoint runs inside the commit that crosses the WAL threshold;
	// DuckDB's 16 MB default made roughly every tenth ingest batch pay for
	// one. 128 MB keeps restart replay to a few seconds.
	if _, err := db.ExecContext(ctx, "SET GLOBAL checkpoint_threshold = '128MB'"); err != nil {
		return nil, errors.Join(fmt.Errorf("configure duckdb: %w", err), db.Close())
	}
	// FSST, DuckDB's default string compression, spent two thirds of the
	// ingest CPU at checkpoints: with distinct text in every call the store
	// took 16k calls/s with it and 50-61k without it
	// (BenchmarkIngestOTelSpans), for about 60% more bytes on disk.
	// Strings are still dictionary-compressed where that pays.
	if _, err := db.ExecContext(ctx, "SET GLOBAL disabled_compression_methods = 'fsst'"); err != nil {
		return nil, errors.Join(fmt.Errorf("configure duckdb compression: %w", err), db.Close())
	}
	// DuckDB's buffer pool defaults to 80% of the machine's memory; a
	// collector shares its host, so it gets a fixed budget and spills
	// beyond it.
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL memory_limit = '%dMB'", memoryMB)); err != nil {
		return nil, errors.Join(fmt.Errorf("configure duckdb memory_limit: %w", err), db.Close())
	}
	// DuckDB's allocator keeps freed memory for reuse; under sustained
	// ingest that held the process near twice the buffer pool. Flushing it
	// after tasks that peaked above 64 MB, with background threads that
	// return it, keeps the resident size near the pool.
	for _, set := range []string{"SET GLOBAL allocator_flush_threshold = '64MB'", "SET GLOBAL allocator_background_threads = true"} {
		if _, err := db.ExecContext(ctx, set); err != nil {
			return nil, errors.Join(fmt.Errorf("configure duckdb allocator: %w", err), db.Close())
		}
	}
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("migrate duckdb %q: %w (close other weft processes using this data dir)", dsn, err), db.Close())
	}
	if s.ids, err = loadIDFilter(ctx, db); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// DB exposes the handle to sibling files of this package's tests.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database; committed data is in the file and its WAL.
func (s *Store) Close() error {
	err := s.db.Close()
	s.dumps.dec.Close()
	if s.ownsBlobDir {
		err = errors.Join(err, os.RemoveAll(s.blobDir))
	}
	return err
}

// Capabilities reports the optional features of this backend.
func (s *Store) Capabilities() storage.Capabilities { return storage.Capabilities{} }

// migrate applies every embedded migration in name order. Each file is
// idempotent (CREATE ... IF NOT EXISTS) so a restart re-runs them safely.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
