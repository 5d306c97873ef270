package api

import (
	"net/http"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/wire"
)

func (a *API) createSecret(r *http.Request, body []byte) (any, error) {
	var entity, name, value string
	err := wire.DecodeTop(body, wire.Fields{"entity": &entity, "name": &name, "value": &value}, "entity", "name", "value")
	if err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
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
	if err := wire.DecodeTop(body, wire.Fields{"entity": &entity}, "entity"); err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
		return nil, err
	}
	list, err := a.svc.ListSecrets(r.Context(), entity)
	if err != nil {
		return nil, err
	}
	out := make([]secretJSON, len(list))
	for i, s := range list {
		out[i] = newSecret(s)
	}
	return map[string]any{"secrets": out}, nil
}

func (a *API) deleteSecret(r *http.Request, body []byte) (any, error) {
	var entity, name string
	if err := wire.DecodeTop(body, wire.Fields{"entity": &entity, "name": &name}, "entity", "name"); err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
		return nil, err
	}
	return empty{}, a.svc.DeleteSecret(r.Context(), entity, name)
}

func (a *API) createWebhook(r *http.Request, body []byte) (any, error) {
	var in automations.WebhookInput
	err := wire.DecodeTop(body, wire.Fields{"entity": &in.Entity, "name": &in.Name, "url": &in.URL,
		"access_token_secret": &in.AccessTokenSecret, "secret": &in.Secret}, "entity", "name", "url")
	if err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), in.Entity); err != nil {
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
	if err := wire.DecodeTop(body, wire.Fields{"entity": &entity}, "entity"); err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
		return nil, err
	}
	list, err := a.svc.ListWebhooks(r.Context(), entity)
	if err != nil {
		return nil, err
	}
	out := make([]webhookJSON, len(list))
	for i, w := range list {
		out[i] = newWebhook(w)
	}
	return map[string]any{"webhooks": out}, nil
}

func (a *API) updateWebhook(r *http.Request, body []byte) (any, error) {
	var entity, id string
	var p automations.WebhookPatch
	err := wire.DecodeTop(body, wire.Fields{"entity": &entity, "id": &id, "name": &p.Name, "url": &p.URL,
		"access_token_secret": &p.AccessTokenSecret, "secret": &p.Secret, "enabled": &p.Enabled}, "entity", "id")
	if err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
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
	if err := wire.DecodeTop(body, wire.Fields{"entity": &entity, "id": &id}, "entity", "id"); err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
		return nil, err
	}
	return empty{}, a.svc.DeleteWebhook(r.Context(), entity, id)
}

func (a *API) testWebhook(r *http.Request, body []byte) (any, error) {
	var entity, id string
	var p payload
	if err := wire.DecodeTop(body, wire.Fields{"entity": &entity, "id": &id, "payload": &p}, "entity", "id"); err != nil {
		return nil, err
	}
	if _, err := entityAdmin(r.Context(), entity); err != nil {
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
