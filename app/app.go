// Package app wires one Weft process together: configuration, key store,
// storage backend, ingest pipeline, receivers and the query API behind one
// HTTP listener (plus OTLP/gRPC), with an orderly shutdown that stops
// accepting, flushes what was acknowledged and closes storage. Which parts
// run depends on the roles (ingest, process, query); all three on the
// embedded store is the default.
//
// It is the only package that knows every other one; nothing imports it
// but cmd/weft and end-to-end tests.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"go.opentelemetry.io/collector/component"
	"google.golang.org/grpc"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/internal/memlimit"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/receiver/kafkareceiver"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/traceapi"
)

// Version is Weft's own release, reported by /version.
const Version = "0.1.0"

// WeaveProtocolVersion is the version of the Weave trace-server protocol
// Weft implements, reported by /server_info as trace_server_version. The
// Weave SDKs compare it with their MIN_TRACE_SERVER_VERSION and turn
// tracing off below it, so it follows the protocol, never Weft's release:
// "0.1.0" is the trace protocol version Weave's client/server
// compatibility contract (client_server_compatibility.json) names for
// the servers its SDKs support, and no later protocol version has been
// published. Raise it with the endpoints a newer protocol adds.
const WeaveProtocolVersion = "0.1.0"

// Server is a running Weft process.
type Server struct {
	cfg    config.Config
	roles  config.Roles
	logger *slog.Logger
	store  backend
	// retention is the configured retention with the changes made
	// through the API.
	retention *retentionSource
	write     *writePath
	metrics   *telemetry.Metrics
	// inflight is the budget of request bytes decoded at once, shared by
	// the HTTP API and OTLP/gRPC.
	inflight *httpapi.Inflight
	keys     auth.KeyStore
	httpSrv  *http.Server
	listener net.Listener
	grpcSrv  *grpc.Server
	grpcLn   net.Listener
	prices   *pricing.Table
	tls      *tls.Config // nil: plain text
	feedback *traceapi.FeedbackAPI
	// reads is the bound on store reads at once that every read API shares.
	reads *traceapi.ReadGate
	// automations holds webhook automations' service and loops.
	automations *automationsPart
	// gateway is the inference gateway; nil in a process without ingest.
	gateway *inference.Gateway
	// training is the training service; nil where it is not served.
	training *trainingPart
	// monitors runs online scorers; nil where calls are not stored here
	// or monitors are off.
	monitors *monitorsPart
	// callRecorder is the gateway's trace queue; nil without the gateway.
	callRecorder component.Component
	// parts are every long-running part of the process, in start order.
	parts lifecycle.List
	// fatal carries the error of a part the process cannot run without
	// (the Kafka consumers) when it stops by itself.
	fatal chan error
	// ready reports whether this node can take writes (GET /ready).
	ready *readiness
}

// Option adjusts how New builds a server.
type Option func(*options)

type options struct {
	memory    *memlimit.Limit
	retention *retentionSource
}

// WithMemoryLimit lets the embedded store raise the process's heap limit
// by what its in-memory index of call keys holds.
func WithMemoryLimit(l *memlimit.Limit) Option {
	return func(o *options) { o.memory = l }
}

// New opens storage and the ingest path for the configured roles and
// builds the handlers. It does not listen yet, nor wait for the replay of
// the write-ahead log: that runs in the background, with writes answered
// 503 until it is done and GET /ready saying how far it is.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	roles, err := config.ParseRoles(cfg.Roles)
	if err != nil {
		return nil, err
	}
	o.retention = newRetentionSource(cfg.Retention, logger)
	store, keys, err := openBackend(ctx, cfg, logger, o)
	if err != nil {
		return nil, err
	}
	if err := o.retention.attach(ctx, store); err != nil {
		return nil, errors.Join(fmt.Errorf("read retention changes: %w", err), store.Close())
	}
	return newServer(ctx, cfg, roles, logger, store, keys, o.retention)
}

// newServer builds the server on an open store, which it closes on
// failure.
func newServer(ctx context.Context, cfg config.Config, roles config.Roles, logger *slog.Logger, store backend, keys auth.KeyStore,
	retention *retentionSource) (*Server, error) {
	s := &Server{cfg: cfg, roles: roles, logger: logger, store: store, keys: keys, retention: retention, metrics: telemetry.New(),
		inflight: httpapi.NewInflight(cfg.Connections.MaxInflightBytes), ready: newReadiness(storeFailed(store)), fatal: make(chan error, 1)}
	if err := s.build(ctx); err != nil {
		s.ready.close()
		return nil, errors.Join(err, store.Close())
	}
	return s, nil
}

func (s *Server) build(ctx context.Context) error {
	var err error
	if err = s.loadTLS(); err != nil {
		return err
	}
	if s.prices, err = loadPrices(s.cfg.PricingFile); err != nil {
		return err
	}
	s.reads = traceapi.NewReadGate(s.cfg.Queries.Budget)
	if s.feedback, err = traceapi.NewFeedbackAPI(s.store, s.cfg.MaxRequestBytes, s.logger,
		traceapi.WithQueryLimits(s.cfg.Queries), traceapi.WithReadGate(s.reads)); err != nil {
		return err
	}
	if reg := s.buildMonitorsRegistry(); reg != nil {
		s.monitors = &monitorsPart{registry: reg}
	}
	if s.write, err = buildWritePath(ctx, s.cfg, s.roles, s.store, s.tapCalls, backendName(s.cfg), s.metrics, s.logger); err != nil {
		return err
	}
	if s.automations, err = buildAutomations(ctx, s.cfg, s.roles, s.store, s.usageCost, s.metrics, s.logger); err != nil {
		return err
	}
	if err := s.buildTraining(ctx); err != nil {
		return err
	}
	if err := s.buildInference(ctx); err != nil {
		return err
	}
	s.write.setDefaultPrices(s.prices)
	s.buildMonitorsRunner()
	verifier := auth.StoreVerifier{Store: s.keys}
	grpcLimits := append(grpcLimits(s.cfg.Connections).ServerOptions(), s.grpcCreds()...)
	if s.grpcSrv, err = otlpreceiver.NewGRPCServer(s.cfg.OTLP, verifier, s.write.front, s.receiverSettings(otlpreceiver.ReceiverType), s.inflight, grpcLimits...); err != nil {
		return err
	}
	s.httpSrv = httpapi.NewServer(s.withReady(s.routes()), httpLimits(s.cfg.Connections),
		slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn))
	s.httpSrv.RegisterOnShutdown(s.training.stopWaiting)
	s.assembleParts()
	return s.parts.Start(ctx)
}

// assembleParts lists the process's parts in start order. Shutdown goes
// in reverse: the Kafka consumers first (nothing more comes in), then the
// loops that read and write the store directly (they stop at once when
// idle, so the write path's drain cannot use up their share of the
// deadline), then the gateway's trace queue and the write path, whose
// processors flush into exporters that still run.
func (s *Server) assembleParts() {
	if s.monitors != nil {
		s.parts.Add("monitors registry", s.monitors.registry)
	}
	for _, p := range s.write.parts {
		s.parts.Add(p.name, p.c)
	}
	s.parts.Add("inference trace queue", s.callRecorder)
	if s.monitors != nil && s.monitors.runner != nil {
		s.parts.Add("monitors runner", s.monitors.runner)
	}
	s.parts.Add("training job queue", s.training.part())
	for _, p := range s.automations.parts(s.logger) {
		s.parts.Add(p.name, p.c)
	}
	if s.gateway != nil {
		s.parts.Add("inference gateway", s.gateway)
	}
	s.parts.Add("retention", s.retentionPart())
	for _, r := range []*kafkareceiver.Receiver{s.write.kafkaIn, s.write.kafkaOTLP} {
		if r != nil {
			r.OnFatal(s.reportFatal)
			s.parts.Add("kafka consumer", r)
		}
	}
}

// httpLimits are the HTTP listener's connection limits.
func httpLimits(c config.Connections) httpapi.ConnLimits {
	return httpapi.ConnLimits{ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadTimeout,
		WriteTimeout: c.WriteTimeout, IdleTimeout: c.IdleTimeout, MaxConns: c.MaxConnections}
}

// grpcLimits are the OTLP/gRPC listener's connection limits.
func grpcLimits(c config.Connections) otlpreceiver.ConnLimits {
	return otlpreceiver.ConnLimits{MaxConnectionIdle: c.IdleTimeout, KeepaliveMinTime: c.GRPCKeepaliveMinTime,
		MaxConcurrentStreams: c.GRPCMaxConcurrentStreams, HandshakeTimeout: c.ReadHeaderTimeout}
}

// Handler is the HTTP API (for in-process tests).
func (s *Server) Handler() http.Handler { return s.httpSrv.Handler }

// Close stops the pipeline and closes storage without serving (tests).
func (s *Server) Close() error { return s.shutdown() }

// Keys returns the key store (the first-start bootstrap uses it).
func (s *Server) Keys() auth.KeyStore { return s.keys }

// Listen binds the HTTP listener and, when this process ingests and it is
// configured, the OTLP/gRPC one; Addr and GRPCAddr are valid afterwards.
// Each listener holds at most connections.max_connections at once.
func (s *Server) Listen() error {
	ln, grpcLn, err := listen(s.cfg, s.roles.Ingest)
	if err != nil {
		return err
	}
	s.listener, s.grpcLn = s.serveTLS(ln), grpcLn
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
// requests finish (each waits for its commit), flush the ingest path, stop
// the processor after its batch in hand, close storage.
func (s *Server) Serve(ctx context.Context) error {
	if err := beginServing(ctx, s.cfg, s.privateMetricsHandler(), s.logger, s.listener != nil, s.Listen); err != nil {
		return errors.Join(err, s.shutdown())
	}
	errCh := startServing(s.httpSrv, s.listener, s.grpcSrv, s.grpcLn)
	s.logger.Info("weft listening", "http", s.Addr(), "roles", s.cfg.Roles)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-s.ready.storeFailed():
		s.logger.Error("stopping: the store cannot work until weft is started again; acknowledged writes stay in the write-ahead log", "err", serveErr)
	case serveErr = <-errCh:
	case serveErr = <-s.fatal:
	}
	return errors.Join(serveErr, s.shutdown())
}

// failingStore is a store that can fail for good while running: DuckDB
// refuses every statement after a fatal error (a full disk during a
// checkpoint) until the process opens it again.
type failingStore interface{ Failed() <-chan error }

// storeFailed is the store's failure channel; nil (never ready) for a
// store that recovers by itself.
func storeFailed(store backend) <-chan error {
	if f, ok := store.(failingStore); ok {
		return f.Failed()
	}
	return nil
}

func (s *Server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	s.logger.Info("shutting down: draining requests and flushing the ingest path")
	// A replay of the write-ahead log ends first: reads waiting for it are
	// answered instead of holding the listeners' drain, and the next start
	// goes on with it.
	s.write.stopReplay()
	err := stopServing(ctx, s.httpSrv, s.grpcSrv)
	err = errors.Join(err, s.parts.Shutdown(ctx))
	s.ready.close()
	if err = errors.Join(err, s.store.Close()); err != nil {
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

// reportFatal ends Serve with err: a part the process cannot run without
// stopped. Only the first report counts.
func (s *Server) reportFatal(err error) {
	select {
	case s.fatal <- err:
	default:
	}
}
