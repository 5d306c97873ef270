package api

import (
	"net/http"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/wire"
)

func (a *API) createSecret(r *http.Request, body []byte) (any, error) {
	var entity, name, value string
	if err := forEntity(r, body, &entity, wire.Fields{"name": &name, "value": &value}, "name", "value"); err != nil {
		return nil, err
	}
	sec, err := a.svc.PutSecret(r.Context(), entity, name, value)
	if err != nil {
		return nil, err
	}
	return newSecret(sec), nil
}

func (a *API) listSecrets(r *http.Request, body []byte) (any, error) {
	var entity string
	if err := forEntity(r, body, &entity, wire.Fields{}); err != nil {
		return nil, err
	}
	list, err := a.svc.ListSecrets(r.Context(), entity)
	return map[string]any{"secrets": each(list, newSecret)}, err
}

func (a *API) deleteSecret(r *http.Request, body []byte) (any, error) {
	var entity, name string
	if err := forEntity(r, body, &entity, wire.Fields{"name": &name}, "name"); err != nil {
		return nil, err
	}
	return empty{}, a.svc.DeleteSecret(r.Context(), entity, name)
}

func (a *API) createWebhook(r *http.Request, body []byte) (any, error) {
	var in automations.WebhookInput
	err := forEntity(r, body, &in.Entity, wire.Fields{"name": &in.Name, "url": &in.URL,
		"access_token_secret": &in.AccessTokenSecret, "secret": &in.Secret}, "name", "url")
	if err != nil {
		return nil, err
	}
	w, err := a.svc.CreateWebhook(r.Context(), in)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": w.ID, "webhook": newWebhook(w)}, nil
}

func (a *API) listWebhooks(r *http.Request, body []byte) (any, error) {
	var entity string
	if err := forEntity(r, body, &entity, wire.Fields{}); err != nil {
		return nil, err
	}
	list, err := a.svc.ListWebhooks(r.Context(), entity)
	return map[string]any{"webhooks": each(list, newWebhook)}, err
}

func (a *API) updateWebhook(r *http.Request, body []byte) (any, error) {
	var entity, id string
	var p automations.WebhookPatch
	err := forEntity(r, body, &entity, wire.Fields{"id": &id, "name": &p.Name, "url": &p.URL,
		"access_token_secret": &p.AccessTokenSecret, "secret": &p.Secret, "enabled": &p.Enabled}, "id")
	if err != nil {
		return nil, err
	}
	w, err := a.svc.UpdateWebhook(r.Context(), entity, id, p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"webhook": newWebhook(w)}, nil
}

func (a *API) deleteWebhook(r *http.Request, body []byte) (any, error) {
	var entity, id string
	if err := forEntity(r, body, &entity, wire.Fields{"id": &id}, "id"); err != nil {
		return nil, err
	}
	return empty{}, a.svc.DeleteWebhook(r.Context(), entity, id)
}

func (a *API) testWebhook(r *http.Request, body []byte) (any, error) {
	var entity, id string
	var p payload
	if err := forEntity(r, body, &entity, wire.Fields{"id": &id, "payload": &p}, "id"); err != nil {
		return nil, err
	}
	var text string
	if p.text != nil {
		text = *p.text
	}
	res, err := a.svc.TestWebhook(r.Context(), entity, id, text)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"status": res.Status, "headers": res.Headers, "body": res.Body,
		"body_truncated": res.Truncated, "latency_ms": res.LatencyMS}
	if res.Error != "" {
		out["error"] = res.Error
	}
	return out, nil
}
