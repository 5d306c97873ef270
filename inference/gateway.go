// Package inference is Weft's OpenAI-compatible inference gateway. It
// serves POST /v1/chat/completions and GET /v1/models on the API listener
// (so the inference base URL is http://HOST:6345/v1), and the trace API's
// own LLM endpoints /completions/create and /completions/create_stream. It
// authenticates Weft keys, resolves the caller's project, caps the requests
// in flight per project and per key, forwards each request to the catalog's upstreams
// (balanced, retried, behind circuit breakers: see route) or answers it
// from the response cache, relays the answer (server-sent events for
// streams, with usage always captured) and records every request as a Weave call in
// the caller's project through the ingest pipeline, without ever making
// the response wait for it.
//
// The catalog lives in inference/catalog, the stream parsers in
// inference/sse and inference/chatstream, the trace queue in
// inference/callrecord. It must never import storage backends, the query
// API, or the pipeline's processors and exporters: calls leave through the
// recorder it is given.
package inference

import (
	"context"
	"errors"
	"go.opentelemetry.io/collector/component"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
)

// Recorder takes a finished call for tracing; it must not block.
type Recorder interface {
	Record(c storage.Call)
}

// Options are what a Gateway is built from.
type Options struct {
	Config   Config
	Catalog  *catalog.Catalog
	Keys     auth.Verifier
	Recorder Recorder
	// Inflight is the listener's budget of request bytes held: a request's
	// body is counted as it is read and until the upstream answered and
	// the call was traced (a listener whose Inflight.Limit already counts
	// the gateway's paths counts them once). nil: no shared budget.
	Inflight *httpapi.Inflight
	Registry prometheus.Registerer
	Logger   *slog.Logger
	// Transport reaches the upstreams; nil: one built from Config.
	Transport http.RoundTripper
	// Adapters resolves models naming trained checkpoints; nil: such
	// models are unknown.
	Adapters Adapters
	// Budgets names a project's enforced budget while it is exceeded;
	// nil: no budgets.
	Budgets Budgets
	// Aliases resolves the aliases catalog models follow; nil: such
	// models answer 503 (follow.go).
	Aliases Aliases

	// Limits shares rate counts between replicas and keeps the limits
	// the admin API sets; nil: this process counts alone and admin
	// changes last until it stops. Spend reads recorded spend for
	// Config.Budgets; nil: they are not enforced. Replica names this
	// process among the replicas.
	Limits  storage.InferenceLimitsStore
	Spend   SpendReader
	Replica string
}

// Gateway serves the inference endpoints.
type Gateway struct {
	loops    lifecycle.Group
	cfg      Config
	catalog  *catalog.Catalog
	keys     auth.Verifier
	recorder Recorder
	inflight *httpapi.Inflight
	logger   *slog.Logger
	limits   *limiter // per project
	keyCaps  *limiter // per API key
	client   *upstreamClient
	metrics  *metrics
	adapters Adapters
	budgets  Budgets
	now      func() time.Time
	// routes balance, retry and break circuits (routes.go).
	routes *routes
	// cache answers repeated deterministic requests; nil: off (cache.go).
	cache *responseCache
	// follower keeps followed aliases' versions; nil without Aliases.
	follower *follower

	rates      *rateLimiter
	spendCaps  *spendCaps
	limitStore storage.InferenceLimitsStore
	replica    string
}

// New builds a Gateway.
func New(o Options) (*Gateway, error) {
	if o.Catalog == nil || o.Keys == nil || o.Recorder == nil || o.Logger == nil || o.Registry == nil {
		return nil, errors.New("inference: Catalog, Keys, Recorder, Registry and Logger are required")
	}
	m, err := newMetrics(o.Registry)
	if err != nil {
		return nil, err
	}
	rt, err := newRoutes(o.Config, o.Catalog, o.Registry)
	if err != nil {
		return nil, err
	}
	cm, err := newCacheMetrics(o.Registry)
	if err != nil {
		return nil, err
	}
	g := &Gateway{cfg: o.Config, catalog: o.Catalog, keys: o.Keys, recorder: o.Recorder, inflight: o.Inflight,
		logger: o.Logger, limits: newLimiter(o.Config.MaxConcurrentPerProject, o.Config.ProjectConcurrency),
		keyCaps: newLimiter(o.Config.MaxConcurrentPerKey, nil), client: newUpstreamClient(o.Config, o.Transport),
		metrics: m, adapters: o.Adapters, budgets: o.Budgets, now: time.Now, routes: rt,
		cache: newResponseCache(o.Config.Cache, cm)}
	if o.Aliases != nil {
		g.follower = newFollower(o.Aliases, o.Catalog, o.Config.AliasRefresh)
	}
	g.initLimits(o)
	// The alias follower and the limits and budgets loops run between
	// Start and Shutdown: the gateway is a component of the process.
	g.loops.Add("inference alias follower", lifecycle.NewLoop("inference alias follower", o.Logger, g.Run))
	for _, loop := range g.Loops() {
		g.loops.Add("inference limits and budgets", lifecycle.NewLoop("inference limits and budgets", o.Logger, loop))
	}
	return g, nil
}

// Register adds the routes. The /v1 routes authenticate on their own and
// answer errors in the OpenAI shape; weaveAuth wraps the trace API's
// completions routes as every other trace API route is wrapped.
func (g *Gateway) Register(mux *http.ServeMux, weaveAuth func(http.Handler) http.Handler) {
	mux.HandleFunc("POST /v1/chat/completions", g.chatCompletions)
	mux.HandleFunc("POST /v1/chat/completions/{$}", g.chatCompletions)
	mux.HandleFunc("GET /v1/models", g.listModels)
	mux.HandleFunc("GET /v1/models/{id...}", g.getModel)
	mux.Handle("POST /completions/create", weaveAuth(http.HandlerFunc(g.weaveCreate)))
	mux.Handle("POST /completions/create_stream", weaveAuth(http.HandlerFunc(g.weaveCreateStream)))
	mux.Handle("POST /image/create", weaveAuth(http.HandlerFunc(g.imageCreate)))
	g.registerLimitsAPI(mux, weaveAuth)
}

// Start implements component.Component: the gateway's loops run in the
// background until Shutdown.
func (g *Gateway) Start(ctx context.Context, host component.Host) error {
	return g.loops.Start(ctx, host)
}

// Shutdown implements component.Component.
func (g *Gateway) Shutdown(ctx context.Context) error { return g.loops.Shutdown(ctx) }
