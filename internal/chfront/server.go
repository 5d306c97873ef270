package chfront

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/weftdev/weft/internal/chdb"
)

// Config configures a Server.
type Config struct {
	Dir      string       // data directory of the engine; created if missing
	Addr     string       // listen address; default 127.0.0.1:0 (a random port)
	Library  string       // path of libchdb.so; empty means chdb.LibraryPath()
	PoolSize int          // engine connections; default chdb.DefaultPoolSize
	Logger   *slog.Logger // nil means slog.Default()
}

// Server is the engine behind the ClickHouse HTTP interface on a loopback port.
type Server struct {
	eng      *chdb.Engine
	srv      *http.Server
	ln       net.Listener
	spoolDir string
	served   chan error

	closeOnce sync.Once
	closeErr  error
}

// Start boots the engine on dir and serves it on 127.0.0.1 at a random port.
func Start(ctx context.Context, dir string) (*Server, error) {
	return StartConfig(ctx, Config{Dir: dir})
}

// StartConfig boots the engine and serves it as cfg says. The caller must
// Close the server before the process exits.
func StartConfig(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	log := logger(cfg.Logger)
	eng, err := chdb.Open(ctx, chdb.Config{Path: cfg.Dir, Library: cfg.Library, PoolSize: cfg.PoolSize, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("chfront: %w", err)
	}
	s, err := serve(ctx, eng, cfg.Addr, log)
	if err != nil {
		eng.Close()
		return nil, err
	}
	return s, nil
}

func serve(ctx context.Context, eng *chdb.Engine, addr string, log *slog.Logger) (*Server, error) {
	spoolDir, err := os.MkdirTemp(spoolRoot(), "weft-chfront-")
	if err != nil {
		return nil, fmt.Errorf("chfront: spool dir: %w", err)
	}
	h, err := NewHandler(ctx, eng, spoolDir, log)
	if err != nil {
		os.RemoveAll(spoolDir)
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		os.RemoveAll(spoolDir)
		return nil, fmt.Errorf("chfront: listen: %w", err)
	}
	s := &Server{
		eng:      eng,
		srv:      &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		ln:       ln,
		spoolDir: spoolDir,
		served:   make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	log.InfoContext(ctx, "clickhouse front end listening", "url", s.URL(), "data", eng.Path())
	return s, nil
}

// spoolRoot prefers RAM-backed /dev/shm: INSERT data passes through it.
func spoolRoot() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".weft-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// URL returns the base URL, e.g. http://127.0.0.1:34567.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Addr returns the listen address as host:port, the form clickhouse-go's
// Options.Addr takes.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Dir returns the engine's data directory.
func (s *Server) Dir() string { return s.eng.Path() }

// Close stops serving, waits for running requests, then shuts the engine
// down. It must run before the process exits. Later calls return the first
// call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.served; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	if cerr := s.eng.Close(); err == nil {
		err = cerr
	}
	if rerr := os.RemoveAll(s.spoolDir); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("chfront: close: %w", err)
	}
	return nil
}

// Exec runs a statement directly on the engine, bypassing HTTP. It suits test
// set-up such as creating databases.
func (s *Server) Exec(ctx context.Context, sql string) error {
	if _, err := s.eng.Query(ctx, chdb.Query{SQL: sql}); err != nil {
		return fmt.Errorf("chfront: exec: %w", err)
	}
	return nil
}
