package graphql

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/weftdev/weft/auth"
)

// MaxRequestBytes bounds a GraphQL request body: the SDKs' documents are
// a few hundred bytes.
const MaxRequestBytes = 64 << 10

// Handler serves POST /graphql with the W&B subset (WandbSchema), for the
// caller the request's API key authenticates.
type Handler struct {
	schema   *Schema
	verifier auth.Verifier
	logger   *slog.Logger
}

// NewHandler returns the GraphQL endpoint over schema.
func NewHandler(schema *Schema, v auth.Verifier, logger *slog.Logger) *Handler {
	return &Handler{schema: schema, verifier: v, logger: logger}
}

// ServeHTTP answers one request. Credentials and bodies that are not a
// GraphQL request get an HTTP error status with a GraphQL errors body;
// everything about the document itself (syntax, unknown fields, access)
// is a 200 whose errors say what is wrong, as GraphQL servers answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, status, err := h.authenticate(r)
	if err != nil {
		writeResponse(w, status, Response{Errors: []*Error{{Message: err.Error()}}})
		return
	}
	req, err := readRequest(w, r)
	if err != nil {
		status := http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		writeResponse(w, status, Response{Errors: []*Error{{Message: err.Error()}}})
		return
	}
	writeResponse(w, http.StatusOK, h.schema.Execute(withPrincipal(r.Context(), p), req))
}

// authenticate reads the key as every weft endpoint does (Basic api:KEY
// is what the SDKs send). The key itself is never logged.
func (h *Handler) authenticate(r *http.Request) (auth.Principal, int, error) {
	key, ok := auth.KeyFromHeader(r.Header)
	if !ok {
		return auth.Principal{}, http.StatusUnauthorized, errors.New("missing API key: send 'Authorization: Basic base64(api:KEY)' (set WANDB_API_KEY), 'Authorization: Bearer KEY' or 'wandb-api-key: KEY'")
	}
	p, err := h.verifier.Verify(r.Context(), key)
	switch {
	case errors.Is(err, auth.ErrUnauthenticated):
		return p, http.StatusUnauthorized, errors.New("invalid API key: it is unknown or revoked; create one with 'weft keys create'")
	case err != nil:
		h.logger.Warn("graphql: verifying an API key failed (the key store is unavailable); the request got 503 and the client retries; if it repeats, check the store", "err", err)
		return p, http.StatusServiceUnavailable, errors.New("the key store is unavailable; retry")
	}
	return p, 0, nil
}

func readRequest(w http.ResponseWriter, r *http.Request) (Request, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		return Request{}, err
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return Request{}, errors.New(`the body must be a JSON object {"query": "...", "variables": {...}, "operationName": "..."}: ` + err.Error())
	}
	if strings.TrimSpace(req.Query) == "" {
		return Request{}, errors.New(`"query" is required: the GraphQL document to run`)
	}
	return req, nil
}

func writeResponse(w http.ResponseWriter, status int, res Response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(res)
}
