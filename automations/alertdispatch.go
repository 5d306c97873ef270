package automations

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/template"
	"github.com/weftdev/weft/storage"
)

// alertEventID names a transition: the alert and the transition's
// number, so the same transition made twice (after a crash) has the
// same delivery.
func alertEventID(automationID string, seq int64) string {
	return "alert:" + automationID + ":" + strconv.FormatInt(seq, 10)
}

// alertDelivery is the delivery of one alert transition, rendered and
// sealed; a payload that cannot be rendered gives a failed delivery that
// says why, as for artifact events.
func (d *Dispatcher) alertDelivery(ctx context.Context, n alertNotice) (storage.Delivery, error) {
	a := n.automation
	now := d.now().UTC().Truncate(time.Microsecond)
	entity, _, _ := strings.Cut(a.ProjectID, "/")
	eventID := alertEventID(a.ID, n.transition.Seq)
	dl := storage.Delivery{ID: DeliveryID(eventID, a.ID), ProjectID: a.ProjectID, AutomationID: a.ID, Entity: entity,
		WebhookID: a.WebhookID, EventID: eventID, EventType: n.eventType(), State: storage.DeliveryPending,
		NextAttemptAt: now, RetryFrom: now, CreatedAt: now, UpdatedAt: now, Body: []byte{}}
	ph, err := d.prepare(ctx, entity, a.WebhookID, map[string]*preparedHook{})
	if err != nil {
		return dl, err
	}
	body, preview, why := d.renderWith(a.Payload, ph, func(c credentials) template.Lookup { return alertVars(n, c) })
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
