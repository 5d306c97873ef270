package chdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultPoolSize is the number of pooled connections when Config leaves it 0.
const DefaultPoolSize = 4

// ErrClosed is returned by Query after Close.
var ErrClosed = errors.New("chdb: engine closed")

// Config says where the engine keeps its data and how it is reached.
type Config struct {
	Path     string       // data directory; created if missing
	Library  string       // path of libchdb.so; empty means LibraryPath()
	PoolSize int          // pooled connections, i.e. statements run in parallel
	Logger   *slog.Logger // nil means slog.Default()
}

// Param binds a server-side {name:Type} placeholder. Value is in the engine's
// escaped text form, exactly as ClickHouse's HTTP param_<name> values are.
type Param struct{ Name, Value string }

// Setting is a session setting applied before the statement runs.
type Setting struct{ Name, Value string }

// Query is one statement to run.
type Query struct {
	SQL      string
	Format   string // output format; empty means TabSeparated
	Database string // current database; empty means "default"
	Params   []Param
	Settings []Setting
	// Isolated runs the statement on a connection of its own that is closed
	// afterwards, so whatever the statement changes in the session (USE, SET)
	// does not leak into pooled connections. Queries with Settings always are.
	Isolated bool
}

// Result is the output of one statement.
type Result struct {
	Data         []byte
	Elapsed      time.Duration
	ResultRows   uint64 // rows in Data
	RowsRead     uint64 // rows read from storage
	BytesRead    uint64 // bytes read from storage
	RowsWritten  uint64 // rows written, including by materialized views
	BytesWritten uint64
}

// Engine is the open engine with its connection pool. It is safe for
// concurrent use.
type Engine struct {
	proc *process
	path string
	log  *slog.Logger
	// keeper is never used for statements; it keeps the engine booted while
	// pooled and per-request connections come and go.
	keeper *rawConn
	pool   chan *pooledConn

	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup
}

type pooledConn struct {
	raw *rawConn
	db  string // current database, tracked to skip redundant USE
}

// Open boots the engine on cfg.Path. Only one engine may be open per process.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Path == "" {
		return nil, errors.New("chdb: Config.Path is required")
	}
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("chdb: data path: %w", err)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("chdb: data path: %w", err)
	}
	libPath := cfg.Library
	if libPath == "" {
		if libPath, err = LibraryPath(); err != nil {
			return nil, err
		}
	}
	p, err := loadProcess(libPath)
	if err != nil {
		return nil, err
	}
	e := &Engine{proc: p, path: path, log: cfg.Logger}
	if e.log == nil {
		e.log = slog.Default()
	}
	if err := e.boot(ctx, cfg.PoolSize); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Engine) boot(ctx context.Context, size int) error {
	if size <= 0 {
		size = DefaultPoolSize
	}
	e.proc.mu.Lock()
	defer e.proc.mu.Unlock()
	if a := e.proc.active; a != nil {
		return fmt.Errorf("chdb: engine already open on %s; one engine per process", a.path)
	}
	start := time.Now()
	keeper, err := e.connect()
	if err != nil {
		return fmt.Errorf("chdb: boot engine on %s: %w", e.path, err)
	}
	e.keeper = keeper
	e.pool = make(chan *pooledConn, size)
	for range size {
		raw, err := e.connect()
		if err != nil {
			e.closeConns()
			return fmt.Errorf("chdb: open pooled connection: %w", err)
		}
		e.pool <- &pooledConn{raw: raw}
	}
	e.proc.active = e
	e.log.DebugContext(ctx, "chdb engine booted", "path", e.path, "pool", size, "took", time.Since(start))
	return nil
}

func (e *Engine) connect() (*rawConn, error) {
	return e.proc.lib.connect([]string{"weft", "--path=" + e.path})
}

// Path returns the absolute data directory.
func (e *Engine) Path() string { return e.path }

// Query runs q. ctx bounds the wait for a free connection; a statement that
// has started runs to completion, since libchdb offers no way to cancel it.
func (e *Engine) Query(ctx context.Context, q Query) (*Result, error) {
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	e.inflight.Add(1)
	e.mu.RUnlock()
	defer e.inflight.Done()

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.Isolated || len(q.Settings) > 0 {
		return e.queryIsolated(q)
	}
	var c *pooledConn
	select {
	case c = <-e.pool:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { e.pool <- c }()
	if err := c.use(databaseOf(q)); err != nil {
		return nil, err
	}
	return c.raw.query(q.SQL, q.Format, q.Params)
}

func (e *Engine) queryIsolated(q Query) (*Result, error) {
	raw, err := e.connect()
	if err != nil {
		return nil, fmt.Errorf("chdb: open connection: %w", err)
	}
	defer raw.close()
	if len(q.Settings) > 0 {
		set, err := setStatement(q.Settings)
		if err != nil {
			return nil, err
		}
		if _, err := raw.query(set, "", nil); err != nil {
			return nil, err
		}
	}
	c := &pooledConn{raw: raw}
	if err := c.use(databaseOf(q)); err != nil {
		return nil, err
	}
	return raw.query(q.SQL, q.Format, q.Params)
}

func (c *pooledConn) use(db string) error {
	if c.db == db {
		return nil
	}
	if _, err := c.raw.query("USE "+QuoteIdentifier(db), "", nil); err != nil {
		return err
	}
	c.db = db
	return nil
}

func databaseOf(q Query) string {
	if q.Database == "" {
		return "default"
	}
	return q.Database
}

// Close waits for running statements, closes every connection and so shuts
// the engine down. Afterwards another engine may be opened in this process.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.inflight.Wait()

	e.proc.mu.Lock()
	defer e.proc.mu.Unlock()
	e.closeConns()
	if e.proc.active == e {
		e.proc.active = nil
	}
	return nil
}

// closeConns closes pooled connections first and the keeper last, so the
// engine shuts down exactly once.
func (e *Engine) closeConns() {
	for len(e.pool) > 0 {
		(<-e.pool).raw.close()
	}
	if e.keeper != nil {
		e.keeper.close()
		e.keeper = nil
	}
}
