// Package app wires one Weft process together: configuration, key store,
// storage backend, ingest pipeline, receivers and the query API behind one
// HTTP listener (plus OTLP/gRPC), with an orderly shutdown that stops
// accepting, flushes what was acknowledged and closes storage.
//
// It is the only package that knows every other one; nothing imports it
// but cmd/weft and end-to-end tests.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"google.golang.org/grpc"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/pipeline"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/queryapi"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/receiver/weavereceiver"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage/duckdb"
)

// Version is the server version reported by /version and /server_info.
const Version = "0.1.0"

// Server is a running Weft process.
type Server struct {
	cfg      config.Config
	logger   *slog.Logger
	store    *duckdb.Store
	queue    *pipeline.Queue
	keys     auth.KeyStore
	httpSrv  *http.Server
	listener net.Listener
	grpcSrv  *grpc.Server
	grpcLn   net.Listener
	prices   *pricing.Table
	feedback *queryapi.FeedbackAPI
}

// New opens the data directory and storage and builds the handlers. It
// does not listen yet.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger) (*Server, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir %s: %w", cfg.DataDir, err)
	}
	store, err := duckdb.Open(ctx, cfg.DataDir, logger)
	if err != nil {
		return nil, err
	}
	queue, err := pipeline.NewQueue(cfg.Pipeline, store, logger)
	if err != nil {
		return nil, errors.Join(err, store.Close())
	}
	s := &Server{cfg: cfg, logger: logger, store: store, queue: queue, keys: auth.NewFileStore(cfg.DataDir)}
	if s.prices, err = loadPrices(cfg.PricingFile); err != nil {
		return nil, errors.Join(err, queue.Stop(ctx), store.Close())
	}
	if s.feedback, err = queryapi.NewFeedbackAPI(store, cfg.MaxRequestBytes, logger); err != nil {
		return nil, errors.Join(err, queue.Stop(ctx), store.Close())
	}
	verifier := auth.StoreVerifier{Store: s.keys}
	if s.grpcSrv, err = otlpreceiver.NewGRPCServer(cfg.OTLP, verifier, queue, logger); err != nil {
		return nil, errors.Join(err, queue.Stop(ctx), store.Close())
	}
	s.httpSrv = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Handler is the HTTP API (for in-process tests).
func (s *Server) Handler() http.Handler { return s.httpSrv.Handler }

// Close stops the pipeline and closes storage without serving (tests).
func (s *Server) Close() error { return s.shutdown() }

// Keys returns the key store (the first-start bootstrap uses it).
func (s *Server) Keys() auth.KeyStore { return s.keys }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	verifier := auth.StoreVerifier{Store: s.keys}
	authn := func(h http.Handler) http.Handler { return httpapi.Authenticate(verifier, s.logger, h) }
	registerService(mux)
	otlp := otlpreceiver.NewHTTPHandler(s.cfg.OTLP, verifier, s.queue, s.logger)
	mux.Handle(otlpreceiver.TracesPath, otlp)
	mux.Handle(otlpreceiver.TracesPathAlias, otlp)
	weavereceiver.New(s.queue, refs.ExtractRefs, s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	queryapi.New(s.store, queryapi.CallExtras{Feedback: s.store, Prices: s.store, Defaults: s.prices},
		s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	queryapi.NewObjectsAPI(s.store, s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	queryapi.NewTablesAPI(s.store, s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	queryapi.NewThreadsAPI(s.store, s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	queryapi.NewFilesAPI(s.store, s.cfg.MaxFileBytes, s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	queryapi.NewCostsAPI(s.store, s.cfg.MaxRequestBytes, s.logger).Register(mux, authn)
	s.feedback.Register(mux, authn)
	return recoverPanics(s.logger, mux)
}

// Listen binds the HTTP listener and, when configured, the OTLP/gRPC one;
// Addr and GRPCAddr are valid afterwards.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w (set --listen or WEFT_LISTEN to a free address)", s.cfg.Listen, err)
	}
	s.listener = ln
	if s.cfg.OTLPGRPCListen == "" {
		return nil
	}
	if s.grpcLn, err = net.Listen("tcp", s.cfg.OTLPGRPCListen); err != nil {
		_ = ln.Close()
		return fmt.Errorf("listen %s: %w (set --otlp-grpc-listen or WEFT_OTLP_GRPC_LISTEN to a free address, or empty to disable OTLP/gRPC)", s.cfg.OTLPGRPCListen, err)
	}
	return nil
}

// GRPCAddr is the bound OTLP/gRPC address, or "" when disabled.
func (s *Server) GRPCAddr() string {
	if s.grpcLn == nil {
		return ""
	}
	return s.grpcLn.Addr().String()
}

// Addr is the bound HTTP address.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Serve runs until ctx ends, then shuts down: stop accepting, let in-flight
// requests finish (each waits for its commit), flush the queue, close.
func (s *Server) Serve(ctx context.Context) error {
	if s.listener == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	if s.cfg.DebugListen != "" {
		if err := serveDebug(ctx, s.cfg.DebugListen, s.logger); err != nil {
			return errors.Join(fmt.Errorf("debug_listen: %w", err), s.shutdown())
		}
	}
	errCh := make(chan error, 2)
	go func() { errCh <- s.httpSrv.Serve(s.listener) }()
	if s.grpcLn != nil {
		go func() { errCh <- s.grpcSrv.Serve(s.grpcLn) }()
	}
	s.logger.Info("weft listening", "http", s.Addr(), "data_dir", s.cfg.DataDir)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errCh:
	}
	return errors.Join(serveErr, s.shutdown())
}

func (s *Server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	s.logger.Info("shutting down: draining requests and flushing the ingest queue")
	stopped := make(chan struct{})
	go func() { s.grpcSrv.GracefulStop(); close(stopped) }()
	err := s.httpSrv.Shutdown(ctx)
	select {
	case <-stopped:
	case <-ctx.Done():
		s.grpcSrv.Stop()
	}
	err = errors.Join(err, s.queue.Stop(ctx), s.store.Close())
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	s.logger.Info("shutdown complete")
	return nil
}

// loadPrices reads the configured price file, or the shipped table.
func loadPrices(path string) (*pricing.Table, error) {
	if path == "" {
		return pricing.Default()
	}
	t, err := pricing.Load(path)
	if err != nil {
		return nil, fmt.Errorf("pricing_file: %w", err)
	}
	return t, nil
}

func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.Error("handler panic", "path", r.URL.Path, "panic", v)
				httpapi.WriteJSON(w, http.StatusInternalServerError, map[string]string{"reason": "Internal server error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}
