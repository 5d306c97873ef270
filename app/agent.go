package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/component"
	"google.golang.org/grpc"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/exporter/forwardexporter"
	"github.com/weftdev/weft/exporter/kafkaexporter"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/receiver/weavereceiver"
	"github.com/weftdev/weft/refs"
)

// Agent is a process of the agent role: the OTLP and Weave call write
// receivers on local listeners, in front of a disk buffer that forwards to
// a central Weft or to Kafka. It opens no store; API keys are checked
// upstream, not here.
type Agent struct {
	cfg      config.Config
	logger   *slog.Logger
	metrics  *telemetry.Metrics
	exp      *forwardexporter.Exporter
	inflight *httpapi.Inflight
	httpSrv  *http.Server
	listener net.Listener
	grpcSrv  *grpc.Server
	grpcLn   net.Listener
}

// NewAgent builds the agent and opens its buffer (forwarding whatever an
// earlier run left there). It does not listen yet.
func NewAgent(ctx context.Context, cfg config.Config, logger *slog.Logger) (*Agent, error) {
	a := &Agent{cfg: cfg, logger: logger, metrics: telemetry.New(), inflight: httpapi.NewInflight(cfg.Connections.MaxInflightBytes)}
	sink, err := newAgentSink(ctx, cfg, a.metrics, logger)
	if err != nil {
		return nil, err
	}
	set := settings(forwardexporter.Type(), "", a.metrics, logger)
	if a.exp, err = forwardexporter.New(set, cfg.AgentConfig(), sink); err != nil {
		return nil, errors.Join(err, sink.Close(ctx))
	}
	if err := a.exp.Start(ctx, nil); err != nil {
		return nil, errors.Join(err, sink.Close(ctx))
	}
	creds := agentCredentials{key: cfg.Agent.APIKey}
	grpcOpts := append(grpcLimits(cfg.Connections).ServerOptions(), grpc.ChainUnaryInterceptor(creds.unary))
	set = a.receiverSettings(otlpreceiver.ReceiverType)
	if a.forwardsOTLP() {
		a.grpcSrv, err = otlpreceiver.NewForwardingGRPCServer(cfg.OTLP, agentVerifier{}, a.exp, set, a.inflight, grpcOpts...)
	} else {
		a.grpcSrv, err = otlpreceiver.NewGRPCServer(cfg.OTLP, agentVerifier{}, a.exp, set, a.inflight, grpcOpts...)
	}
	if err != nil {
		return nil, errors.Join(err, a.exp.Shutdown(ctx))
	}
	handler, err := a.routes(creds)
	if err != nil {
		return nil, errors.Join(err, a.exp.Shutdown(ctx))
	}
	a.httpSrv = httpapi.NewServer(handler, httpLimits(cfg.Connections), slog.NewLogLogger(logger.Handler(), slog.LevelWarn))
	return a, nil
}

// newAgentSink is where the agent forwards: the central Weft's Weave API,
// or the call topic through the ingest role's producer.
func newAgentSink(ctx context.Context, cfg config.Config, m *telemetry.Metrics, logger *slog.Logger) (forwardexporter.Sink, error) {
	if cfg.Agent.Upstream != "" {
		client := &http.Client{Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: cfg.Agent.RequestTimeout,
		}}
		return forwardexporter.NewWeaveSink(cfg.Agent.Upstream, client), nil
	}
	if cfg.Kafka.CreateTopics {
		if err := kafkabase.EnsureTopics(ctx, cfg.Kafka, logger); err != nil {
			return nil, fmt.Errorf("kafka topics: %w", err)
		}
	}
	prod, err := kafkaexporter.NewProducer(settings(kafkaexporter.Type(), "agent", m, logger), cfg.Kafka)
	if err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	return forwardexporter.NewKafkaSink(prod, prod.Stop), nil
}

// routes are the agent's HTTP API: OTLP/HTTP and the Weave call writes,
// buffered; the service endpoints and /metrics, answered here; with a
// central Weft upstream, every other path proxied to it unbuffered.
func (a *Agent) routes(creds agentCredentials) (http.Handler, error) {
	mux := http.NewServeMux()
	registerService(mux)
	saturated := a.exp.Saturated
	set := a.receiverSettings(otlpreceiver.ReceiverType)
	var otlp http.Handler
	if a.forwardsOTLP() {
		otlp = otlpreceiver.NewForwardingHTTPHandler(a.cfg.OTLP, agentVerifier{}, a.exp, set)
	} else {
		otlp = otlpreceiver.NewHTTPHandler(a.cfg.OTLP, agentVerifier{}, a.exp, set)
	}
	otlp = shed(saturated, a.logger, otlp)
	mux.Handle(otlpreceiver.TracesPath, otlp)
	mux.Handle(otlpreceiver.TracesPathAlias, otlp)
	weave := countingCalls{next: a.exp,
		accepted: a.metrics.ReceiverAcceptedCalls.WithLabelValues("weave", "http"),
		refused:  a.metrics.ReceiverRefusedCalls.WithLabelValues("weave", "http")}
	weavereceiver.New(weave, refs.ExtractRefs, a.cfg.MaxRequestBytes, a.logger).Register(mux, func(h http.Handler) http.Handler {
		return shed(saturated, a.logger, httpapi.Authenticate(agentVerifier{}, a.logger, h))
	})
	if a.cfg.MetricsListen == "" {
		mux.Handle("GET /metrics", a.metrics.Handler())
	}
	if a.cfg.Agent.Upstream != "" {
		proxy, err := newUpstreamProxy(a.cfg.Agent.Upstream, a.logger)
		if err != nil {
			return nil, err
		}
		mux.Handle("/", proxy)
	}
	return recoverPanics(a.logger, a.metrics.HTTPAbortedResponses, creds.wrap(a.inflight.Limit(mux, "/file/create", "/files/create"))), nil
}

// forwardsOTLP reports whether spans are buffered and forwarded as OTLP,
// to the center's OTLP endpoint, where they are mapped to calls. Forwarding
// to Kafka maps them here, on receipt: the call topic carries calls.
func (a *Agent) forwardsOTLP() bool { return a.cfg.Agent.Upstream != "" }

func (a *Agent) receiverSettings(typ string) telemetry.Settings {
	return settings(component.MustNewType(typ), "", a.metrics, a.logger)
}

// Exporter is the agent's buffer and forwarder (for tests).
func (a *Agent) Exporter() *forwardexporter.Exporter { return a.exp }

// Listen binds the HTTP listener and, when configured, OTLP/gRPC.
func (a *Agent) Listen() error {
	var err error
	a.listener, a.grpcLn, err = listen(a.cfg, true)
	return err
}

// Addr is the bound HTTP address.
func (a *Agent) Addr() string { return a.listener.Addr().String() }

// GRPCAddr is the bound OTLP/gRPC address, or "" when disabled.
func (a *Agent) GRPCAddr() string {
	if a.grpcLn == nil {
		return ""
	}
	return a.grpcLn.Addr().String()
}

// Serve runs until ctx ends, then stops accepting, lets requests in flight
// finish, and closes the buffer; what is buffered and not yet forwarded
// is forwarded after the next start.
func (a *Agent) Serve(ctx context.Context) error {
	if err := beginServing(ctx, a.cfg, a.metrics.Handler(), a.logger, a.listener != nil, a.Listen); err != nil {
		return errors.Join(err, a.shutdown())
	}
	errCh := startServing(a.httpSrv, a.listener, a.grpcSrv, a.grpcLn)
	a.logger.Info("weft agent listening", "http", a.Addr(), "grpc", a.GRPCAddr(), "upstream", a.upstreamName())
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errCh:
	}
	return errors.Join(serveErr, a.shutdown())
}

func (a *Agent) upstreamName() string {
	if a.cfg.Agent.Upstream != "" {
		return a.cfg.Agent.Upstream
	}
	return "kafka topic " + a.cfg.Kafka.Topic
}

// Close stops the agent without serving (tests).
func (a *Agent) Close() error { return a.shutdown() }

func (a *Agent) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	err := stopServing(ctx, a.httpSrv, a.grpcSrv)
	if err = errors.Join(err, a.exp.Shutdown(ctx)); err != nil {
		return fmt.Errorf("agent shutdown: %w", err)
	}
	a.logger.Info("agent stopped")
	return nil
}
