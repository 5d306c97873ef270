// Package traceapi serves the trace server's HTTP API beside the call
// writes (which the receivers take into the pipeline): the endpoints that
// go straight to storage, call reads (read, stream_query, query_stats,
// stats, usage), threads, aggregates, and the content-addressed or small
// writes and reads of objects, tables, refs, files, feedback, costs,
// projects and annotation queues, plus Weft's own (monitors' status,
// retention settings, evaluation comparisons). The one
// exception is the evaluation runs API, whose records are calls and so
// are written through the pipeline (EvaluationRunsAPI). Every handler
// authorises the request's project before it touches storage.
//
// It must never import storage backends or receivers.
package traceapi

import (
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/querylang"
)

// API holds the read handlers' dependencies.
type API struct {
	calls    CallReader
	extras   CallExtras
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
}

// New builds the calls query API over a calls reader; extras serve
// include_costs and include_feedback.
func New(calls CallReader, extras CallExtras, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *API {
	o := applyOptions(opts)
	return &API{calls: calls, extras: extras, logger: logger, maxBytes: maxBodyBytes, limits: o.limits,
		budget: newReadBudget(o, logger)}
}

// Register adds the read routes to mux; wrap is applied to every handler.
// Every read runs within the API's Budget.
func (a *API) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /call/read", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.callRead))))
	mux.Handle("POST /calls/query_stats", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.callsQueryStats))))
	mux.Handle("POST /calls/query", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.callsQuery))))
	mux.Handle("POST /calls/stream_query", wrap(http.HandlerFunc(a.callsStreamQuery)))
	mux.Handle("POST /trace/usage", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.traceUsage))))
	mux.Handle("POST /calls/usage", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.callsUsage))))
}
