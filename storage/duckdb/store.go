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
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/storage"
)

//go:embed migrations/*.sql
var migrations embed.FS

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
	// located narrows reads by call or trace id (see locator.go).
	located *callLocator
	// dir is the data directory, "" in memory.
	dir string
	// keysPath is where Close saves ids and located for the next open,
	// as of epoch (callkeys.go); "" in memory.
	keysPath string
	epoch    string
	// indexBytes is Options.IndexBytes; reportedIndex what it was last
	// told (guarded by writeMu).
	indexBytes    func(int64)
	reportedIndex int64
	// watch reports an invalidated database (see watchdog.go).
	watch *watchdog
	// blobDir holds file contents by digest (see migrations/0004_files.sql).
	blobDir string
	// ownsBlobDir: an in-memory store made a temp dir that Close removes.
	ownsBlobDir bool
	// pageSize is how many calls one read query materialises.
	pageSize int64
	// scatteredRows is the span of row ids from which a page's calls are
	// fetched by their start times (queryPageByStarts).
	scatteredRows int64
	// dumps compresses raw OTel spans (see dump.go).
	dumps *dumpCodec
	// callsUnlogged: call writes are durable at CheckpointCalls, not at
	// commit (Options.CallsUnlogged).
	callsUnlogged bool
	// stmts keeps prepared the reads that run outside a transaction.
	stmts *stmtCache
	// calls keeps checkpoints of the calls file apart from reads of it.
	calls *callsGuard
	// refresher keeps the chart rollups up to date (see minutes.go).
	refresher *minutesRefresher
}

// Open opens (creating if needed) the database in dir and applies pending
// migrations. An empty dir opens an in-memory database (tests only).
func Open(ctx context.Context, dir string, logger *slog.Logger) (*Store, error) {
	return OpenWithOptions(ctx, dir, Options{}, logger)
}

// OpenWithOptions is Open with DuckDB's memory and threads set by opts.
func OpenWithOptions(ctx context.Context, dir string, opts Options, logger *slog.Logger) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db, err := openDB(dir, opts.CallsUnlogged)
	if err != nil {
		return nil, err
	}
	dumps, err := newDumpCodec()
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	s := &Store{db: db, logger: logger, callsUnlogged: opts.CallsUnlogged, blobDir: filepath.Join(dir, "files"), pageSize: readPageSize, scatteredRows: 2 * rowGroupRows, dumps: dumps,
		calls: newCallsGuard(opts.checkpointPatience), indexBytes: opts.IndexBytes}
	if dir == "" {
		if s.blobDir, err = os.MkdirTemp("", "weft-files-"); err != nil {
			return nil, errors.Join(err, db.Close())
		}
		s.ownsBlobDir = true
	} else if err := os.MkdirAll(s.blobDir, 0o700); err != nil {
		return nil, errors.Join(fmt.Errorf("files dir: %w", err), db.Close())
	}
	if err := configure(ctx, db, dir, opts); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("migrate duckdb in %q: %w (close other weft processes using this data dir)", dir, err), db.Close())
	}
	s.stmts = newStmtCache(db, maxCachedStmts)
	if dir != "" {
		s.dir, s.keysPath = dir, filepath.Join(dir, KeysFileName)
	}
	if err := s.openCallKeys(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	s.startWatchdog(watchEvery)
	s.startMinutesRefresher(refreshEvery)
	return s, nil
}

// DB exposes the handle to sibling files of this package's tests.
func (s *Store) DB() *sql.DB { return s.db }

// Close checkpoints and closes both database files: committed data is in
// the files (and the main file's WAL), unlogged calls included.
//
// After a failed commit of calls (Failed reported it) it closes nothing:
// closing would checkpoint the calls table, reading the rows the commit
// left; the process is about to end, and what the calls file lacks is in
// the write-ahead log.
func (s *Store) Close() error {
	s.stopMinutesRefresher()
	s.stopWatchdog()
	if err := s.calls.err(); err != nil {
		return fmt.Errorf("close duckdb: not closed: %w", err)
	}
	s.stmts.close()
	s.awaitConnsReturned(closeWait)
	s.writeMu.Lock() // kept: nothing may write after the keys are saved
	defer s.writeMu.Unlock()
	s.saveCallKeys()
	err := errors.Join(s.detach(), s.db.Close())
	s.dumps.dec.Close()
	if s.ownsBlobDir {
		err = errors.Join(err, os.RemoveAll(s.blobDir))
	}
	return err
}

// closeWait bounds how long Close waits for connections still in use.
const closeWait = 5 * time.Second

// awaitConnsReturned waits, up to max, until no connection is in use.
// When a transaction's context is canceled (as at shutdown), database/sql
// rolls it back on a goroutine of its own, after its caller has returned;
// DuckDB then closed the database files only when that connection was
// done, after Close had returned, while a caller (a test's cleanup, a
// backup) already used the directory.
func (s *Store) awaitConnsReturned(max time.Duration) {
	deadline := time.Now().Add(max)
	for s.db.Stats().InUse > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// Capabilities reports the optional features of this backend.
func (s *Store) Capabilities() storage.Capabilities { return storage.Capabilities{} }

// migrate applies every embedded migration in name order. Each file is
// idempotent (CREATE ... IF NOT EXISTS) so a restart re-runs them safely.
// Files whose name contains "_calls" shape the calls table and run in its
// catalog, after calls a previous version kept in the main file move there.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	var callsDDL []string
	for _, name := range names {
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if strings.Contains(name, "_calls") {
			callsDDL = append(callsDDL, string(body))
			continue
		}
		if _, err := s.db.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return s.migrateCalls(ctx, callsDDL)
}
