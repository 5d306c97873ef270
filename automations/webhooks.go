package automations

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/template"
	"github.com/weftdev/weft/storage"
)

// WebhookPatch changes the fields that are set. An empty secret name
// removes that secret; Enabled true re-enables a disabled webhook and
// starts its health afresh, false disables it.
type WebhookPatch struct {
	Name, URL, AccessTokenSecret, Secret *string
	Enabled                              *bool
}

// UpdateWebhook applies a patch.
func (s *Service) UpdateWebhook(ctx context.Context, entity, id string, p WebhookPatch) (storage.Webhook, error) {
	w, err := s.d.Store.GetWebhook(ctx, entity, id)
	if err != nil {
		return w, err
	}
	set(&w.Name, p.Name)
	set(&w.URL, p.URL)
	set(&w.AccessTokenSecret, p.AccessTokenSecret)
	set(&w.SigningSecret, p.Secret)
	now := s.now()
	if p.Enabled != nil && *p.Enabled {
		w.WebhookHealth = storage.WebhookHealth{}
	}
	if p.Enabled != nil && !*p.Enabled && w.DisabledAt == nil {
		w.DisabledAt, w.DisabledReason = &now, "disabled by its owner"
	}
	w.UpdatedAt = now
	if err := s.checkWebhook(w); err != nil {
		return storage.Webhook{}, err
	}
	return w, s.d.Store.UpdateWebhook(ctx, w)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// ListWebhooks lists an entity's webhooks.
func (s *Service) ListWebhooks(ctx context.Context, entity string) ([]storage.Webhook, error) {
	return s.d.Store.ListWebhooks(ctx, entity)
}

// DeleteWebhook removes a webhook no automation uses.
func (s *Service) DeleteWebhook(ctx context.Context, entity, id string) error {
	return s.d.Store.DeleteWebhook(ctx, entity, id)
}

// TestResult is a webhook's answer to a test.
type TestResult struct {
	Status    int
	Headers   map[string]string
	Body      string
	Truncated bool
	LatencyMS int64
	Error     string // set when no answer arrived
}

// defaultTestPayload is sent when a test names no payload.
const defaultTestPayload = `{"event_type":"${event_type}","entity_name":"${entity_name}","event_id":"${event_id}"}`

// TestWebhook sends one signed request, as a delivery would, with a test
// payload that may use the webhook's variables (event variables have
// sample values; event_type is TEST). Nothing is saved.
func (s *Service) TestWebhook(ctx context.Context, entity, id, payload string) (TestResult, error) {
	w, err := s.d.Store.GetWebhook(ctx, entity, id)
	if err != nil {
		return TestResult{}, err
	}
	if payload == "" {
		payload = defaultTestPayload
	}
	tmpl, err := template.Parse(payload)
	if err == nil {
		err = tmpl.Check(knownVars(w))
	}
	if err != nil {
		return TestResult{}, invalid("payload", "%v", err)
	}
	token, secret, err := delivery.WebhookCredentials(ctx, s.d.Store, s.d.Box, w)
	if err != nil {
		return TestResult{}, err
	}
	creds := credentials{token: token, secretName: w.SigningSecret, secret: secret}
	body, err := tmpl.Render(eventVars(sampleEvent(entity+"/test", s.now()), "test", creds), s.d.MaxPayloadBytes)
	if err != nil {
		return TestResult{}, invalid("payload", "%v", err)
	}
	resp := s.d.Sender.Send(ctx, delivery.Request{ID: "test_" + uuid.NewString(), URL: w.URL, Body: body, Token: token, Secret: secret})
	var blocked *egress.BlockedError
	if errors.As(resp.Err, &blocked) {
		return TestResult{}, invalid("url", "%v", blocked)
	}
	return testResult(resp), nil
}

func testResult(r delivery.Response) TestResult {
	out := TestResult{Status: r.Status, Headers: map[string]string{}, Body: strings.ToValidUTF8(string(r.Body), "\uFFFD"),
		Truncated: r.Truncated, LatencyMS: r.Latency.Milliseconds()}
	for k := range r.Header {
		out.Headers[strings.ToLower(k)] = http.Header(r.Header).Get(k)
	}
	if r.Err != nil {
		out.Error = r.Err.Error()
	}
	return out
}
