package app

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/receiver/weavereceiver"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/traceapi"
	trainingapi "github.com/weftdev/weft/training/api"
)

// routes registers what this process's roles serve. Call writes and OTLP
// belong to ingest, call and thread reads to query; objects, tables,
// files, feedback and costs go straight to storage and are served by
// either, so a load balancer may send them to any API role.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	verifier := auth.StoreVerifier{Store: s.keys}
	authn := func(h http.Handler) http.Handler { return httpapi.Authenticate(verifier, s.logger, h) }
	registerService(mux)
	registerGraphQL(mux, verifier, s.logger)
	max := s.cfg.MaxRequestBytes
	// The queries section: the limits a query is checked against, and the
	// budget of every read below; they share one gate, so its bounds on
	// reads at once hold for the whole process.
	queries, gate := traceapi.WithQueryLimits(s.cfg.Queries), traceapi.WithReadGate(s.reads)
	if s.roles.Ingest {
		otlp := shed(s.write.saturated, s.logger, otlpreceiver.NewHTTPHandler(s.cfg.OTLP, verifier, s.write.front, s.receiverSettings(otlpreceiver.ReceiverType)))
		mux.Handle(otlpreceiver.TracesPath, otlp)
		mux.Handle(otlpreceiver.TracesPathAlias, otlp)
		weave := countingCalls{next: s.write.front,
			accepted: s.metrics.ReceiverAcceptedCalls.WithLabelValues("weave", "http"),
			refused:  s.metrics.ReceiverRefusedCalls.WithLabelValues("weave", "http")}
		weavereceiver.New(weave, refs.ExtractRefs, max, s.logger).Register(mux, func(h http.Handler) http.Handler {
			return shed(s.write.saturated, s.logger, authn(h))
		})
	}
	if s.roles.Query {
		reads := consistentReads{backend: s.store, barrier: s.write.barrier}
		extras := traceapi.CallExtras{Feedback: s.store, Prices: s.store, Defaults: s.prices, Refs: s.store,
			Users: auth.StoreUsers{Store: s.keys}, Retention: s.retention.For}
		traceapi.New(reads, extras, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewThreadsAPI(reads, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewAggregateAPI(reads, extras, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewCallStatsAPI(reads, extras, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewProjectsAPI(reads, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewMonitorsAPI(s.store, s.cfg.Monitors.DailySpendCapUSD, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewEvalResultsAPI(reads, s.store, extras, max, s.logger, queries, gate).Register(mux, authn)
		// Evaluation runs, predictions and scores are calls written through
		// the pipeline and read back through reads, so a process serves them
		// only with both roles (the default serve). Split into ingest and
		// query processes, neither serves them (404): route them to a
		// process that runs both.
		if s.roles.Ingest {
			traceapi.NewEvaluationRunsAPI(s.write.front, reads, traceapi.EvalRunStores{Objects: s.automations.objects, Files: s.store, Feedback: s.store}, max, s.logger, queries, gate).Register(mux, authn)
		}
	}
	if s.gateway != nil {
		s.gateway.Register(mux, authn)
	}
	s.training.register(mux)
	mux.Handle("POST "+BackupPath, authn(http.HandlerFunc(s.serveBackup)))
	if s.cfg.MetricsListen == "" {
		mux.Handle("GET /metrics", s.apiMetricsHandler())
	}
	if s.roles.Ingest || s.roles.Query {
		traceapi.NewObjectsAPI(s.monitorsObjects(s.automations.objects), max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewV2ObjectsAPI(s.automations.objects, s.store, s.store, max, s.logger, queries, gate).Register(mux, authn)
		s.automations.register(mux, max, s.logger, authn)
		traceapi.NewTablesAPI(s.store, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewFilesAPI(s.store, s.cfg.MaxFileBytes, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewCostsAPI(s.store, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewTTLAPI(s.store, s.retention, max, s.logger).Register(mux, authn)
		s.feedback.Register(mux, authn)
		traceapi.NewAnnotationQueuesAPI(s.store, max, s.logger, queries, gate).Register(mux, authn)
		traceapi.NewActionsAPI(s.store, s.feedback, s.llm(), max, s.logger).Register(mux, authn)
	}
	c := s.cfg.Connections
	s.inflight.SetPolicy(httpapi.BodyPolicy{PerKey: c.MaxInflightBytesPerKey, MinRate: c.MinBodyRate, Grace: c.BodyRateGrace})
	// Only bodies that stream to disk stay out of the budget; the
	// gateway's are counted until the upstream answered and the call was
	// traced, the worker's JSON bodies by the training API itself.
	unbudgeted := []string{"/file/create", "/files/create", trainingapi.StreamedPrefix}
	return recoverPanics(s.logger, s.metrics.HTTPAbortedResponses, s.withUI(underTraces(s.inflight.Limit(mux, unbudgeted...))))
}

// recoverPanics answers 500 for a handler that panicked, and counts, per
// route, the answers a handler broke off on purpose (http.ErrAbortHandler:
// a stream that failed after its 200, which the client sees as a broken
// connection, never as a short answer that looks complete). The handler
// logged the cause; the abort goes on to net/http, which closes the
// connection or resets the stream.
func recoverPanics(logger interface {
	Error(msg string, args ...any)
}, aborted *prometheus.CounterVec, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					aborted.WithLabelValues(routeOf(r)).Inc()
					panic(v)
				}
				logger.Error("a request handler panicked (a bug in weft); the request got 500 and weft serves on; report it with this line", "path", r.URL.Path, "panic", v)
				httpapi.WriteJSON(w, http.StatusInternalServerError, map[string]string{"reason": "Internal server error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// routeOf is the pattern the mux matched r with (net/http sets it on the
// request it routes), so a metric's label stays one per route whatever ids
// the path holds.
func routeOf(r *http.Request) string {
	if r.Pattern == "" {
		return "unmatched"
	}
	return r.Pattern
}

// receiverSettings identifies a receiver to its telemetry.
func (s *Server) receiverSettings(typ string) telemetry.Settings {
	return settings(component.MustNewType(typ), "", s.metrics, s.logger)
}

// shed answers 429 with Retry-After, before reading the body, while
// saturated says the store's backlog is nearly full: decoding a request
// only for the exporter to refuse it would take CPU from the store that is
// catching up.
func shed(saturated func() bool, logger *slog.Logger, next http.Handler) http.Handler {
	if saturated == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if saturated() {
			httpapi.WriteError(w, r, logger, fmt.Errorf("the store is catching up with acknowledged writes: %w", consumer.ErrOverloaded))
			return
		}
		next.ServeHTTP(w, r)
	})
}
