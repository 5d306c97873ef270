// Package api serves webhook automations over HTTP in the RPC style of
// the rest of the Weave API (JSON POST bodies, {"reason": ...} errors):
// /secrets/*, /webhooks/*, /automations/* and /artifacts/link. Every
// handler authorises the caller before it reads or writes anything:
// secrets, webhooks and automations need an admin of their entity;
// linking needs read on the source and write on the registry.
//
// It must never import receivers, the query API or a storage backend.
package api

import (
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/wire"
)

// API is the automations endpoints.
type API struct {
	svc      *automations.Service
	logger   *slog.Logger
	maxBytes int64
}

// New serves svc, reading bodies of at most maxBodyBytes.
func New(svc *automations.Service, maxBodyBytes int64, logger *slog.Logger) *API {
	return &API{svc: svc, logger: logger, maxBytes: maxBodyBytes}
}

// Register adds the routes to mux; wrap (authentication) is applied to
// every handler.
func (a *API) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST /secrets/create":              a.createSecret,
		"POST /secrets/list":                a.listSecrets,
		"POST /secrets/delete":              a.deleteSecret,
		"POST /webhooks/create":             a.createWebhook,
		"POST /webhooks/list":               a.listWebhooks,
		"POST /webhooks/update":             a.updateWebhook,
		"POST /webhooks/delete":             a.deleteWebhook,
		"POST /webhooks/test":               a.testWebhook,
		"POST /automations/create":          a.createAutomation,
		"POST /automations/list":            a.listAutomations,
		"POST /automations/update":          a.updateAutomation,
		"POST /automations/delete":          a.deleteAutomation,
		"POST /automations/deliveries":      a.deliveries,
		"POST /automations/redeliver":       a.redeliver,
		"POST /automations/alerts/history":  a.alertHistory,
		"POST /automations/alerts/evaluate": a.alertEvaluate,
		"POST /artifacts/link":              a.link,
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
}

// forEntity decodes an entity-scoped body (entity plus fields) and checks
// that the caller administers that entity, before anything is read.
func forEntity(r *http.Request, body []byte, entity *string, fields wire.Fields, required ...string) error {
	fields["entity"] = entity
	if err := wire.DecodeTop(body, fields, append(required, "entity")...); err != nil {
		return err
	}
	if *entity == "" {
		return &wire.FieldError{Field: "entity", Msg: "must name the team that owns it"}
	}
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok {
		return auth.ErrUnauthenticated
	}
	return p.AuthorizeEntity(*entity, auth.Admin)
}

// forProject decodes a project-scoped body and checks that the caller
// administers the project's entity: project and registry admins are the
// entity's admins, as Weft keys carry one role per entity.
func forProject(r *http.Request, body []byte, projectID *string, fields wire.Fields, required ...string) (auth.Principal, error) {
	fields["project_id"] = projectID
	if err := wire.DecodeTop(body, fields, append(required, "project_id")...); err != nil {
		return auth.Principal{}, err
	}
	return httpapi.Authorize(r.Context(), *projectID, auth.Admin)
}

// each maps a list to its JSON shapes.
func each[T, J any](list []T, shape func(T) J) []J {
	out := make([]J, len(list))
	for i, v := range list {
		out[i] = shape(v)
	}
	return out
}

type empty struct{}
