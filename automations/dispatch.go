package automations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/automations/template"
	"github.com/weftdev/weft/storage"
)

// DispatchStore is what dispatching reads.
type DispatchStore interface {
	delivery.SecretGetter
	ListAutomations(ctx context.Context, projectID string) ([]storage.Automation, error)
	GetWebhook(ctx context.Context, entity, id string) (storage.Webhook, error)
}

// Dispatcher turns artifact events into deliveries: one per automation
// an event fires, with the payload rendered and sealed.
type Dispatcher struct {
	store      DispatchStore
	box        *secretbox.Box
	maxPayload int
	now        func() time.Time
}

// NewDispatcher renders payloads of at most maxPayload bytes.
func NewDispatcher(store DispatchStore, box *secretbox.Box, maxPayload int, now func() time.Time) *Dispatcher {
	return &Dispatcher{store: store, box: box, maxPayload: maxPayload, now: now}
}

// DeliveryID is the id of an event's delivery to an automation: derived
// from both, so dispatching an event twice (after a crash, or a Kafka
// redelivery) makes the same delivery, which the store keeps once.
func DeliveryID(eventID, automationID string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + automationID))
	return "dlv_" + hex.EncodeToString(sum[:16])
}

// Deliveries returns the deliveries of events. An error means nothing
// could be decided for now (storage down, a secret this key cannot
// open) and the events should be dispatched again later; a payload that
// cannot be rendered gives a failed delivery that says why.
func (d *Dispatcher) Deliveries(ctx context.Context, events []storage.ArtifactEvent) ([]storage.Delivery, error) {
	autos := map[string][]storage.Automation{}
	hooks := map[string]*preparedHook{}
	var out []storage.Delivery
	for _, e := range events {
		list, ok := autos[e.ProjectID]
		if !ok {
			var err error
			if list, err = d.store.ListAutomations(ctx, e.ProjectID); err != nil {
				return nil, fmt.Errorf("automations of %s: %w", e.ProjectID, err)
			}
			autos[e.ProjectID] = list
		}
		for _, a := range list {
			alias, fires := matchEvent(a, e)
			if !fires {
				continue
			}
			dl, err := d.delivery(ctx, e, a, alias, hooks)
			if err != nil {
				return nil, err
			}
			out = append(out, dl)
		}
	}
	return out, nil
}

// preparedHook is a webhook with its credentials opened, or why not.
type preparedHook struct {
	hook    storage.Webhook
	creds   credentials
	missing string
}

func (d *Dispatcher) delivery(ctx context.Context, e storage.ArtifactEvent, a storage.Automation, alias string, hooks map[string]*preparedHook) (storage.Delivery, error) {
	now := d.now().UTC().Truncate(time.Microsecond)
	entity, _, _ := strings.Cut(a.ProjectID, "/")
	dl := storage.Delivery{ID: DeliveryID(e.ID, a.ID), ProjectID: a.ProjectID, AutomationID: a.ID, Entity: entity,
		WebhookID: a.WebhookID, EventID: e.ID, EventType: e.Type, State: storage.DeliveryPending,
		NextAttemptAt: now, RetryFrom: now, CreatedAt: now, UpdatedAt: now, Body: []byte{}}
	ph, err := d.prepare(ctx, entity, a.WebhookID, hooks)
	if err != nil {
		return dl, err
	}
	body, preview, why := d.render(a, e, alias, ph)
	if why != "" {
		dl.State, dl.LastError = storage.DeliveryFailed, why
		return dl, nil
	}
	if dl.Body, err = d.box.Seal(body, delivery.BodyContext(dl.ID)); err != nil {
		return dl, err
	}
	dl.Preview = string(preview)
	return dl, nil
}

func (d *Dispatcher) prepare(ctx context.Context, entity, id string, hooks map[string]*preparedHook) (*preparedHook, error) {
	if ph, ok := hooks[id]; ok {
		return ph, nil
	}
	ph := &preparedHook{}
	hook, err := d.store.GetWebhook(ctx, entity, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		ph.missing = "webhook " + id + " was deleted"
	case err != nil:
		return nil, err
	default:
		token, secret, err := delivery.WebhookCredentials(ctx, d.store, d.box, hook)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		ph.hook, ph.creds = hook, credentials{token: token, secretName: hook.SigningSecret, secret: secret}
		if err != nil {
			ph.missing = err.Error()
		}
	}
	hooks[id] = ph
	return ph, nil
}

// render fills the payload in twice: for sending, and with secret values
// masked for the history. A non-empty reason says why it cannot be sent.
func (d *Dispatcher) render(a storage.Automation, e storage.ArtifactEvent, alias string, ph *preparedHook) (body, preview []byte, reason string) {
	return d.renderWith(a.Payload, ph, func(c credentials) template.Lookup { return eventVars(e, alias, c) })
}

// renderWith renders payload with the variables vars gives for a
// webhook's credentials, plain and masked.
func (d *Dispatcher) renderWith(payload string, ph *preparedHook, vars func(credentials) template.Lookup) (body, preview []byte, reason string) {
	if ph.missing != "" {
		return nil, nil, ph.missing
	}
	tmpl, err := template.Parse(payload)
	if err == nil {
		body, err = tmpl.Render(vars(ph.creds), d.maxPayload)
	}
	if err == nil {
		preview, err = tmpl.Render(vars(ph.creds.masked()), 0)
	}
	if err != nil {
		return nil, nil, "payload: " + err.Error()
	}
	return body, preview, ""
}
