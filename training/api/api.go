// Package api serves the training service over HTTP: the serverless
// training API OpenPipe ART calls (/v1/preview/..., /v1/health,
// /v1/system-check) with its list envelope and FastAPI-style errors
// ({"detail": ...}; 422 with a list of {loc, msg, type}), and the worker
// protocol (/v1/worker/...) `weft trainer` speaks. Unknown body members
// are ignored: clients send more than the server reads.
//
// It must never import storage backends, receivers or the query API.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/training"
	"github.com/weftdev/weft/training/trajectory"
	"github.com/weftdev/weft/wire"
)

// API is the training service's HTTP endpoints.
type API struct {
	svc          *training.Service
	keys         auth.Verifier
	maxBody      int64
	maxFileBytes int64
	budget       *httpapi.Inflight
	logger       *slog.Logger
}

// New builds the API; maxBody bounds JSON bodies, maxFileBytes uploads.
// budget is the listener's in-flight byte budget: the JSON bodies under
// StreamedPrefix, which the listener does not count, take their share of
// it here (nil: none).
func New(svc *training.Service, keys auth.Verifier, maxBody, maxFileBytes int64, budget *httpapi.Inflight, logger *slog.Logger) *API {
	return &API{svc: svc, keys: keys, maxBody: maxBody, maxFileBytes: maxFileBytes, budget: budget, logger: logger}
}

// StreamedPrefix starts the paths whose bodies (checkpoint files) stream
// to storage rather than being held in memory; the listener leaves them
// out of its in-flight byte budget. The worker's JSON bodies under it
// (events, checkpoints, finish, heartbeat) are counted by the API itself.
const StreamedPrefix = "/v1/worker/jobs/"

// budgeted counts h's request bodies in the in-flight byte budget: when
// not enough is free the request is answered 429 before it is read.
func (a *API) budgeted(h http.Handler) http.Handler {
	if a.budget == nil {
		return h
	}
	return a.budget.Limit(h)
}

// Register adds every route.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /v1/system-check", a.systemCheck)
	a.registerPreview(mux)
	a.registerLists(mux)
	a.registerWorker(mux)
}

// handler is an authenticated endpoint: it answers a value (status 200)
// or an error.
type handler func(r *http.Request, p auth.Principal) (any, error)

// serve authenticates the request and answers h's value as JSON.
func (a *API) serve(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r)
		var v any
		if err == nil {
			v, err = h(r.WithContext(httpapi.WithPrincipal(r.Context(), p)), p)
		}
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

func (a *API) authenticate(r *http.Request) (auth.Principal, error) {
	key, ok := auth.KeyFromHeader(r.Header)
	if !ok {
		return auth.Principal{}, fmt.Errorf("%w: send 'Authorization: Bearer KEY' with a Weft API key", auth.ErrUnauthenticated)
	}
	return a.keys.Verify(r.Context(), key)
}

// writeError answers err the FastAPI way: {"detail": message}, and for a
// value the schema refuses {"detail": [{"loc", "msg", "type"}]} with 422.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var te *trajectory.Error
	var fe *wire.FieldError
	switch {
	case errors.As(err, &te):
		writeJSON(w, http.StatusUnprocessableEntity, detail(te.Loc, te.Msg, te.Type))
		return
	case errors.As(err, &fe) && httpapi.Status(err) == http.StatusUnprocessableEntity:
		writeJSON(w, http.StatusUnprocessableEntity, detail([]any{"body", fe.Field}, fe.Msg, "value_error"))
		return
	}
	status := httpapi.Status(err)
	msg := err.Error()
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(httpapi.RetryAfterSeconds))
	case status >= 500:
		a.logger.Error("training: a request failed with a server error; the client got the 5xx status; if it repeats, check the store, otherwise report it as a bug with this line", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "Internal server error"
	}
	writeJSON(w, status, map[string]any{"detail": msg})
}

func detail(loc []any, msg, typ string) map[string]any {
	return map[string]any{"detail": []map[string]any{{"loc": loc, "msg": msg, "type": typ}}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"detail":"Internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// systemCheck answers each check's success, duration (seconds) and
// error; 503 when one fails. It needs no key.
func (a *API) systemCheck(w http.ResponseWriter, r *http.Request) {
	checks := a.svc.SystemCheck(r.Context())
	out := map[string]any{}
	status := http.StatusOK
	for name, c := range checks {
		var msg any
		if c.Err != nil {
			msg, status = c.Err.Error(), http.StatusServiceUnavailable
		}
		out[name] = map[string]any{"success": c.Success, "duration": c.Duration.Seconds(), "error": msg}
	}
	writeJSON(w, status, out)
}

// body is a JSON request object, members undecoded.
type body map[string]json.RawMessage

// readBody reads a bounded JSON object; anything else is a 422.
func (a *API) readBody(r *http.Request) (body, error) {
	raw, err := httpapi.ReadJSON(r, a.maxBody)
	if err != nil {
		return nil, err
	}
	var b body
	if err := json.Unmarshal(raw, &b); err != nil || b == nil {
		return nil, &trajectory.Error{Loc: []any{"body"}, Msg: "the body must be a JSON object", Type: "model_attributes_type"}
	}
	return b, nil
}

func null(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// field decodes member name into v (want says what it must be, for the
// error); required members must be present.
func (b body) field(name string, v any, required bool, want string) error {
	raw := b[name]
	if null(raw) {
		if required {
			return &trajectory.Error{Loc: []any{"body", name}, Msg: "field required", Type: "missing"}
		}
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &trajectory.Error{Loc: []any{"body", name}, Msg: "must be " + want, Type: "type_error"}
	}
	return nil
}
