// Package weavereceiver serves the Weave call write endpoints (start, end,
// upsert_batch, the v2 calls_complete family, update and delete): it
// authenticates, decodes and validates, maps to storage call ops and hands
// them to the pipeline, answering only when they are durable.
//
// It must never import storage backends or the query API.
package weavereceiver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// MaxDeleteIDs is the most call ids one /calls/delete may name.
const MaxDeleteIDs = 1000

// Receiver holds the dependencies of the write handlers.
type Receiver struct {
	sub      consumer.Calls
	extract  wire.RefExtractor
	logger   *slog.Logger
	maxBytes int64
	now      func() time.Time
}

// New builds a Receiver. extract finds refs in inputs and outputs.
func New(sub consumer.Calls, extract wire.RefExtractor, maxBodyBytes int64, logger *slog.Logger) *Receiver {
	return &Receiver{sub: sub, extract: extract, logger: logger, maxBytes: maxBodyBytes, now: time.Now}
}

// Register adds the write routes to mux; wrap is applied to every handler
// (authentication).
func (rc *Receiver) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	routes := map[string]httpapi.BodyHandler{
		"POST /call/start":                           rc.callStart,
		"POST /call/end":                             rc.callEnd,
		"POST /call/upsert_batch":                    rc.upsertBatch,
		"POST /v2/{entity}/{project}/call/start":     rc.callStart,
		"POST /v2/{entity}/{project}/call/end":       rc.callEnd,
		"POST /v2/{entity}/{project}/calls/complete": rc.callsComplete,
		"POST /call/update":                          rc.callUpdate,
		"POST /calls/delete":                         rc.callsDelete,
	}
	for pattern, h := range routes {
		mux.Handle(pattern, wrap(httpapi.JSON(rc.logger, rc.maxBytes, h)))
	}
}

// authorizer checks each distinct project of a request once.
type authorizer struct {
	ctx     context.Context
	pathPID string // v2 routes: the project in the path
	checked map[string]auth.Principal
}

func newAuthorizer(r *http.Request) *authorizer {
	a := &authorizer{ctx: r.Context(), checked: map[string]auth.Principal{}}
	if e, p := r.PathValue("entity"), r.PathValue("project"); e != "" {
		a.pathPID = e + "/" + p
	}
	return a
}

func (a *authorizer) write(projectID string) (auth.Principal, error) {
	if p, ok := a.checked[projectID]; ok {
		return p, nil
	}
	if a.pathPID != "" && projectID != a.pathPID {
		return auth.Principal{}, &wire.FieldError{Field: "project_id", Msg: fmt.Sprintf("%q differs from the project in the URL path %q", projectID, a.pathPID)}
	}
	p, err := httpapi.Authorize(a.ctx, projectID, auth.Write)
	if err != nil {
		return p, err
	}
	a.checked[projectID] = p
	return p, nil
}

func (rc *Receiver) submit(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	res, err := rc.sub.ConsumeCalls(ctx, ops)
	if err != nil {
		return nil, fmt.Errorf("writing calls: %w", err)
	}
	return res, nil
}

func (rc *Receiver) callStart(r *http.Request, body []byte) (any, error) {
	var start wire.StartedCall
	if err := wire.DecodeTop(body, wire.Fields{"start": &start}, "start"); err != nil {
		return nil, err
	}
	op, err := rc.startOp(newAuthorizer(r), &start)
	if err != nil {
		return nil, prefixField("start", err)
	}
	if _, err := rc.submit(r.Context(), []storage.CallOp{op}); err != nil {
		return nil, err
	}
	return map[string]string{"id": op.Part.Call.ID, "trace_id": op.Part.Call.TraceID}, nil
}

func (rc *Receiver) startOp(a *authorizer, s *wire.StartedCall) (storage.CallOp, error) {
	p, err := a.write(s.ProjectID)
	if err != nil {
		return storage.CallOp{}, err
	}
	part, err := s.StartPart(p.UserID, rc.extract)
	return storage.CallOp{Part: &part}, err
}

// endOps is the end part, then the rename the end carries, if any.
func (rc *Receiver) endOps(a *authorizer, e *wire.EndedCall) ([]storage.CallOp, error) {
	p, err := a.write(e.ProjectID)
	if err != nil {
		return nil, err
	}
	part, err := e.EndPart(rc.extract)
	if err != nil {
		return nil, err
	}
	ops := []storage.CallOp{{Part: &part}}
	if rename, ok := e.Rename(p.UserID); ok {
		ops = append(ops, rename)
	}
	return ops, nil
}

func (rc *Receiver) callEnd(r *http.Request, body []byte) (any, error) {
	var end wire.EndedCall
	if err := wire.DecodeTop(body, wire.Fields{"end": &end}, "end"); err != nil {
		return nil, err
	}
	ops, err := rc.endOps(newAuthorizer(r), &end)
	if err != nil {
		return nil, prefixField("end", err)
	}
	if _, err := rc.submit(r.Context(), ops); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// prefixField puts a location in front of a field error's path.
func prefixField(prefix string, err error) error {
	if fe, ok := err.(*wire.FieldError); ok {
		if fe.Field == "" {
			fe.Field = prefix
		} else {
			fe.Field = prefix + "." + fe.Field
		}
	}
	return err
}
