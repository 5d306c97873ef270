package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// payload is a template given as a JSON string, or as the JSON value it
// should send (an object is easier to write than an escaped string).
type payload struct {
	text *string
}

func (p *payload) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		p.text = &s
		return nil
	}
	text := strings.TrimSpace(string(b))
	p.text = &text
	return nil
}

// automationFields are the fields create and update share.
type automationFields struct {
	scope                                                   *scopeJSON
	name, description, event, aliasRegex, filter, webhookID *string
	payload                                                 payload
	enabled                                                 *bool
	condition                                               *json.RawMessage
}

func (f *automationFields) wire(fields wire.Fields) wire.Fields {
	for k, v := range map[string]any{"scope": &f.scope, "name": &f.name, "description": &f.description, "event": &f.event,
		"alias_regex": &f.aliasRegex, "collection_filter": &f.filter, "webhook_id": &f.webhookID,
		"payload": &f.payload, "enabled": &f.enabled, "condition": &f.condition} {
		fields[k] = v
	}
	return fields
}

func (f *automationFields) patch() automations.AutomationPatch {
	p := automations.AutomationPatch{Name: f.name, Description: f.description, CollectionFilter: f.filter,
		Event: f.event, AliasRegex: f.aliasRegex, WebhookID: f.webhookID, Payload: f.payload.text, Enabled: f.enabled}
	if f.scope != nil {
		p.Scope, p.ScopeCollection = &f.scope.Type, &f.scope.Collection
	}
	if f.condition != nil {
		text := string(*f.condition)
		p.Condition = &text
	}
	return p
}

func (a *API) createAutomation(r *http.Request, body []byte) (any, error) {
	var projectID string
	var f automationFields
	p, err := forProject(r, body, &projectID, f.wire(wire.Fields{}), "scope", "event", "webhook_id", "name", "enabled")
	if err != nil {
		return nil, err
	}
	var in storage.Automation
	in.ProjectID, in.CreatedBy = projectID, p.UserID
	f.patch().Apply(&in)
	au, err := a.svc.CreateAutomation(r.Context(), in)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": au.ID, "automation": a.withAlert(r, au)}, nil
}

func (a *API) listAutomations(r *http.Request, body []byte) (any, error) {
	var projectID string
	if _, err := forProject(r, body, &projectID, wire.Fields{}); err != nil {
		return nil, err
	}
	list, err := a.svc.ListAutomations(r.Context(), projectID)
	if err != nil {
		return nil, err
	}
	states, err := a.svc.AlertStates(r.Context(), projectID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"automations": each(list, func(au storage.Automation) automationJSON {
		return newAutomation(au, states)
	})}, nil
}

func (a *API) updateAutomation(r *http.Request, body []byte) (any, error) {
	var projectID, id string
	var f automationFields
	if _, err := forProject(r, body, &projectID, f.wire(wire.Fields{"id": &id}), "id"); err != nil {
		return nil, err
	}
	au, err := a.svc.UpdateAutomation(r.Context(), projectID, id, f.patch())
	if err != nil {
		return nil, err
	}
	return map[string]any{"automation": a.withAlert(r, au)}, nil
}

func (a *API) deleteAutomation(r *http.Request, body []byte) (any, error) {
	var projectID, id string
	var confirm bool
	if _, err := forProject(r, body, &projectID, wire.Fields{"id": &id, "confirm": &confirm}, "id"); err != nil {
		return nil, err
	}
	if !confirm {
		return nil, &wire.FieldError{Field: "confirm", Msg: "set confirm: true to delete automation " + id + " and its delivery history"}
	}
	return empty{}, a.svc.DeleteAutomation(r.Context(), projectID, id)
}

func (a *API) deliveries(r *http.Request, body []byte) (any, error) {
	var projectID, automationID string
	var limit int
	if _, err := forProject(r, body, &projectID, wire.Fields{"automation_id": &automationID, "limit": &limit}, "automation_id"); err != nil {
		return nil, err
	}
	list, err := a.svc.Deliveries(r.Context(), projectID, automationID, limit)
	return map[string]any{"deliveries": each(list, newDelivery)}, err
}

func (a *API) redeliver(r *http.Request, body []byte) (any, error) {
	var projectID, id string
	if _, err := forProject(r, body, &projectID, wire.Fields{"delivery_id": &id}, "delivery_id"); err != nil {
		return nil, err
	}
	d, err := a.svc.Redeliver(r.Context(), projectID, id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"delivery": newDelivery(d)}, nil
}

func (a *API) link(r *http.Request, body []byte) (any, error) {
	var req automations.LinkRequest
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "collection": &req.Collection,
		"version": &req.Version, "registry": &req.Registry, "target_collection": &req.TargetCollection,
		"aliases": &req.Aliases}, "project_id", "collection", "version", "registry")
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if _, err := httpapi.Authorize(ctx, req.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	target, err := automations.LinkTarget(req)
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(ctx, target, auth.Write); err != nil {
		return nil, err
	}
	res, err := a.svc.Link(ctx, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"project_id": res.ProjectID, "collection": res.Collection,
		"version_index": res.VersionIndex, "digest": res.Digest}, nil
}
