// Package queryapi serves the Weave endpoints that go straight to storage
// rather than through the ingest pipeline: call reads (read, stream_query,
// query_stats), threads, and the content-addressed or small writes and
// reads of objects, tables, refs, files, feedback and costs. Every handler
// authorises the request's project before it touches storage.
//
// It must never import storage backends or receivers.
package queryapi

import (
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/internal/httpapi"
)

// API holds the read handlers' dependencies.
type API struct {
	calls    CallReader
	extras   CallExtras
	logger   *slog.Logger
	maxBytes int64
}

// New builds the calls query API over a calls reader; extras serve
// include_costs and include_feedback.
func New(calls CallReader, extras CallExtras, maxBodyBytes int64, logger *slog.Logger) *API {
	return &API{calls: calls, extras: extras, logger: logger, maxBytes: maxBodyBytes}
}

// Register adds the read routes to mux; wrap is applied to every handler.
func (a *API) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /call/read", wrap(a.json(a.callRead)))
	mux.Handle("POST /calls/query_stats", wrap(a.json(a.callsQueryStats)))
	mux.Handle("POST /calls/query", wrap(a.json(a.callsQuery)))
	mux.Handle("POST /calls/stream_query", wrap(http.HandlerFunc(a.callsStreamQuery)))
}

type jsonHandler func(r *http.Request, body []byte) (any, error)

func (a *API) json(h jsonHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := httpapi.ReadBody(r, a.maxBytes)
		if err == nil {
			var res any
			if res, err = h(r, body); err == nil {
				httpapi.WriteJSON(w, http.StatusOK, res)
				return
			}
		}
		httpapi.WriteError(w, r, a.logger, err)
	})
}
