package automations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/weftdev/weft/storage"
)

// emptyPayload is what an automation without a payload sends.
const emptyPayload = "{}"

// CreateAutomation checks and stores a with a new id; the caller sets
// ProjectID and CreatedBy.
func (s *Service) CreateAutomation(ctx context.Context, a storage.Automation) (storage.Automation, error) {
	now := s.now()
	a.ID, a.CreatedAt, a.UpdatedAt = "au_"+newID(), now, now
	if err := s.checkAutomation(ctx, &a); err != nil {
		return storage.Automation{}, err
	}
	return a, s.d.Store.CreateAutomation(ctx, a)
}

// AutomationPatch changes the fields that are set. Scope and
// ScopeCollection go together: setting the scope sets its collection
// (none when ScopeCollection is nil).
type AutomationPatch struct {
	Name, Description, Scope, ScopeCollection, CollectionFilter *string
	Event, AliasRegex, WebhookID, Payload, Condition            *string
	Enabled                                                     *bool
}

// Apply sets the patch's fields on a.
func (p AutomationPatch) Apply(a *storage.Automation) {
	if p.Scope != nil {
		a.Scope, a.Collection = *p.Scope, ""
	}
	for dst, v := range map[*string]*string{&a.Name: p.Name, &a.Description: p.Description, &a.Collection: p.ScopeCollection,
		&a.CollectionFilter: p.CollectionFilter, &a.Event: p.Event, &a.AliasRegex: p.AliasRegex,
		&a.WebhookID: p.WebhookID, &a.Payload: p.Payload, &a.Condition: p.Condition} {
		set(dst, v)
	}
	set(&a.Enabled, p.Enabled)
	if p.Event != nil && p.Condition == nil && a.Event != storage.EventCallAlert {
		a.Condition = "" // an alert turned into an artifact automation keeps no condition
	}
}

// UpdateAutomation applies a patch, checking the result as a whole.
func (s *Service) UpdateAutomation(ctx context.Context, projectID, id string, p AutomationPatch) (storage.Automation, error) {
	a, err := s.d.Store.GetAutomation(ctx, projectID, id)
	if err != nil {
		return a, err
	}
	p.Apply(&a)
	a.UpdatedAt = s.now()
	if err := s.checkAutomation(ctx, &a); err != nil {
		return storage.Automation{}, err
	}
	return a, s.d.Store.UpdateAutomation(ctx, a)
}

// checkAutomation applies every rule; the payload is checked against
// the variables its webhook offers.
func (s *Service) checkAutomation(ctx context.Context, a *storage.Automation) error {
	if err := checkName("name", a.Name); err != nil {
		return err
	}
	if utf8.RuneCountInString(a.Description) > MaxDescriptionLen {
		return invalid("description", "must be at most %d characters", MaxDescriptionLen)
	}
	if err := checkScope(*a); err != nil {
		return err
	}
	if err := checkEvent(a); err != nil {
		return err
	}
	entity, _, _ := strings.Cut(a.ProjectID, "/")
	if a.WebhookID == "" {
		return invalid("webhook_id", "required; name one of /webhooks/list")
	}
	w, err := s.d.Store.GetWebhook(ctx, entity, a.WebhookID)
	if errors.Is(err, storage.ErrNotFound) {
		return invalid("webhook_id", "%q does not exist in entity %q; create it with /webhooks/create", a.WebhookID, entity)
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(a.Payload) == "" {
		a.Payload = emptyPayload
	}
	return checkPayload(*a, w, s.d.MaxPayloadBytes)
}

// ListAutomations lists a project's automations.
func (s *Service) ListAutomations(ctx context.Context, projectID string) ([]storage.Automation, error) {
	return s.d.Store.ListAutomations(ctx, projectID)
}

// DeleteAutomation removes an automation and its delivery history.
func (s *Service) DeleteAutomation(ctx context.Context, projectID, id string) error {
	return s.d.Store.DeleteAutomation(ctx, projectID, id)
}

// MaxDeliveriesListed bounds a history page.
const MaxDeliveriesListed = 1000

// Deliveries lists an automation's deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, projectID, automationID string, limit int) ([]storage.Delivery, error) {
	if _, err := s.d.Store.GetAutomation(ctx, projectID, automationID); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxDeliveriesListed {
		limit = MaxDeliveriesListed
	}
	return s.d.Store.ListDeliveries(ctx, projectID, automationID, limit)
}

// Redeliver makes a delivery due now, with the same id and payload and a
// fresh retry window, whatever its state: a receiver that lost a
// delivered one gets it again.
func (s *Service) Redeliver(ctx context.Context, projectID, id string) (storage.Delivery, error) {
	d, err := s.d.Store.GetDelivery(ctx, projectID, id)
	if err != nil {
		return d, err
	}
	now := s.now()
	switch {
	case d.LeaseUntil != nil && d.LeaseUntil.After(now):
		return d, fmt.Errorf("an attempt of this delivery is in flight; redeliver once it has finished: %w", storage.ErrConflict)
	case len(d.Body) == 0:
		return d, invalid("delivery_id", "this delivery has no payload to send (%s); fix the automation and trigger the event again", d.LastError)
	}
	d.State, d.NextAttemptAt, d.RetryFrom, d.UpdatedAt = storage.DeliveryPending, now, now, now
	if err := s.d.Store.SaveDeliveries(ctx, []storage.Delivery{d}); err != nil {
		return d, err
	}
	s.d.Wake()
	return d, nil
}
