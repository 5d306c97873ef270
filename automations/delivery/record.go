package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// MaxStoredResponse is how much of an answer the history keeps.
const MaxStoredResponse = 4 << 10

// apply records an attempt's outcome on its delivery and schedules the
// next attempt, or gives up.
func (w *Worker) apply(d storage.Delivery, o outcome, now time.Time) storage.Delivery {
	d.Attempts++
	d.LeaseOwner, d.LeaseUntil, d.UpdatedAt = "", nil, now
	at := now
	d.DeliveryResult = storage.DeliveryResult{LastAttemptAt: &at, LastStatus: o.resp.Status, LastError: o.reason,
		LastResponse: storedText(o.resp.Body), LastLatencyMS: o.resp.Latency.Milliseconds()}
	switch {
	case o.delivered:
		d.State = storage.DeliveryDelivered
		w.Stats.Delivered.Add(1)
	case o.permanent:
		d.State = storage.DeliveryFailed
		w.Stats.Failed.Add(1)
	default:
		next, ok := w.opts.Policy.Next(d.Attempts, d.RetryFrom, now, o.floor)
		if ok {
			d.NextAttemptAt = next
			w.Stats.Retried.Add(1)
			break
		}
		d.State = storage.DeliveryFailed
		d.LastError += fmt.Sprintf("; gave up after %d attempts over %s (automations.retry.max_elapsed); redeliver to try again",
			d.Attempts, now.Sub(d.RetryFrom).Round(time.Second))
		w.Stats.Failed.Add(1)
		w.logger.Warn("automations: a webhook delivery failed for good (automations.retry.max_elapsed passed); it is marked failed; fix the endpoint, then retry it with /automations/redeliver", "delivery", d.ID, "automation", d.AutomationID,
			"attempts", d.Attempts, "reason", o.reason)
	}
	return d
}

// storedText keeps the start of an answer as valid UTF-8 text.
func storedText(b []byte) string {
	if len(b) > MaxStoredResponse {
		b = b[:MaxStoredResponse]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// health updates the webhook after a request: a success ends a failing
// streak; a 410, or failures for DisableAfter, disable it, saying why.
// Only changes are written.
func (w *Worker) health(ctx context.Context, hook storage.Webhook, o outcome, now time.Time) {
	h := hook.WebhookHealth
	switch {
	case o.delivered && h.FailingSince == nil:
		return
	case o.delivered:
		h.FailingSince = nil
	case o.gone:
		h.DisabledAt, h.DisabledReason = &now, fmt.Sprintf("the receiver answered 410 Gone at %s; re-enable with /webhooks/update once it accepts deliveries again", now.Format(time.RFC3339))
	case h.FailingSince == nil:
		h.FailingSince = &now
	case now.Sub(*h.FailingSince) >= w.opts.DisableAfter:
		h.DisabledAt = &now
		h.DisabledReason = fmt.Sprintf("every delivery failed since %s (automations.disable_after is %s); last error: %s; re-enable with /webhooks/update",
			h.FailingSince.Format(time.RFC3339), w.opts.DisableAfter, o.reason)
	default:
		return
	}
	if h.DisabledAt != nil && hook.DisabledAt == nil {
		w.logger.Warn("automations: a webhook is disabled after failing for automations.disable_after; it gets no deliveries; fix the endpoint, then re-enable it with /webhooks/update", "entity", hook.Entity, "webhook", hook.ID, "reason", h.DisabledReason)
	}
	if err := w.store.SetWebhookHealth(ctx, hook.Entity, hook.ID, h); err != nil {
		w.logger.Warn("automations: recording a webhook's health failed; it is recorded again at its next delivery; if it repeats, check the store", "webhook", hook.ID, "err", err)
		return
	}
	w.hooks.setHealth(hook.Entity, hook.ID, h)
}
