package api

import (
	"encoding/json"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// secretJSON lists a secret: never its value.
type secretJSON struct {
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func newSecret(s storage.Secret) secretJSON {
	return secretJSON{Name: s.Name, CreatedAt: wire.FormatTime(s.CreatedAt), UpdatedAt: wire.FormatTime(s.UpdatedAt)}
}

// webhookJSON shows a webhook: its secrets by name only.
type webhookJSON struct {
	ID                string  `json:"id"`
	Entity            string  `json:"entity"`
	Name              string  `json:"name"`
	URL               string  `json:"url"`
	AccessTokenSecret *string `json:"access_token_secret"`
	Secret            *string `json:"secret"`
	Enabled           bool    `json:"enabled"`
	DisabledAt        *string `json:"disabled_at"`
	DisabledReason    *string `json:"disabled_reason"`
	FailingSince      *string `json:"failing_since"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

func newWebhook(w storage.Webhook) webhookJSON {
	return webhookJSON{ID: w.ID, Entity: w.Entity, Name: w.Name, URL: w.URL,
		AccessTokenSecret: optional(w.AccessTokenSecret), Secret: optional(w.SigningSecret),
		Enabled: w.DisabledAt == nil, DisabledAt: optionalTime(w.DisabledAt), DisabledReason: optional(w.DisabledReason),
		FailingSince: optionalTime(w.FailingSince), CreatedAt: wire.FormatTime(w.CreatedAt), UpdatedAt: wire.FormatTime(w.UpdatedAt)}
}

// scopeJSON is an automation's scope.
type scopeJSON struct {
	Type       string `json:"type"`
	Collection string `json:"collection,omitempty"`
}

// automationJSON shows an automation.
type automationJSON struct {
	ID               string    `json:"id"`
	ProjectID        string    `json:"project_id"`
	Name             string    `json:"name"`
	Description      string    `json:"description"`
	Scope            scopeJSON `json:"scope"`
	Event            string    `json:"event"`
	AliasRegex       *string   `json:"alias_regex"`
	CollectionFilter *string   `json:"collection_filter"`
	WebhookID        string    `json:"webhook_id"`
	Payload          string    `json:"payload"`
	Enabled          bool      `json:"enabled"`
	CreatedBy        string    `json:"created_by"`
	CreatedAt        string    `json:"created_at"`
	UpdatedAt        string    `json:"updated_at"`
	// Condition and Alert are a CALL_ALERT automation's.
	Condition json.RawMessage `json:"condition,omitempty"`
	Alert     *alertJSON      `json:"alert,omitempty"`
}

// alertJSON is an alert's last evaluation; evaluated_at is null before
// the first.
type alertJSON struct {
	State       string   `json:"state"`
	Value       *float64 `json:"value"`
	EvaluatedAt *string  `json:"evaluated_at"`
	ChangedAt   *string  `json:"changed_at"`
}

// newAutomation shows a with its alert state from states (by automation
// id) when it is an alert.
func newAutomation(a storage.Automation, states map[string]storage.AlertState) automationJSON {
	out := automationJSON{ID: a.ID, ProjectID: a.ProjectID, Name: a.Name, Description: a.Description,
		Scope: scopeJSON{Type: a.Scope, Collection: a.Collection}, Event: a.Event, AliasRegex: optional(a.AliasRegex),
		CollectionFilter: optional(a.CollectionFilter), WebhookID: a.WebhookID, Payload: a.Payload, Enabled: a.Enabled,
		CreatedBy: a.CreatedBy, CreatedAt: wire.FormatTime(a.CreatedAt), UpdatedAt: wire.FormatTime(a.UpdatedAt)}
	if a.Event != storage.EventCallAlert {
		return out
	}
	out.Condition, out.Alert = json.RawMessage(a.Condition), &alertJSON{State: storage.AlertOK}
	if st, ok := states[a.ID]; ok {
		evaluated, changed := wire.FormatTime(st.EvaluatedAt), wire.FormatTime(st.ChangedAt)
		out.Alert = &alertJSON{State: st.State, Value: &st.Value, EvaluatedAt: &evaluated, ChangedAt: &changed}
	}
	return out
}

// transitionJSON is one entry of an alert's history.
type transitionJSON struct {
	Seq       int64   `json:"seq"`
	State     string  `json:"state"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	At        string  `json:"at"`
}

func newTransition(t storage.AlertTransition) transitionJSON {
	return transitionJSON{Seq: t.Seq, State: t.State, Value: t.Value, Threshold: t.Threshold, At: wire.FormatTime(t.At)}
}

// deliveryJSON is one entry of the history: the payload with secret
// values masked, the attempts and the receiver's last answer.
type deliveryJSON struct {
	ID            string  `json:"id"`
	AutomationID  string  `json:"automation_id"`
	WebhookID     string  `json:"webhook_id"`
	EventID       string  `json:"event_id"`
	EventType     string  `json:"event_type"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	Payload       string  `json:"payload"`
	NextAttemptAt *string `json:"next_attempt_at"`
	LastAttemptAt *string `json:"last_attempt_at"`
	StatusCode    *int    `json:"response_status"`
	Response      *string `json:"response_body"`
	Error         *string `json:"error"`
	LatencyMS     *int64  `json:"latency_ms"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

func newDelivery(d storage.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, AutomationID: d.AutomationID, WebhookID: d.WebhookID, EventID: d.EventID,
		EventType: d.EventType, Status: d.State, Attempts: d.Attempts, Payload: d.Preview,
		LastAttemptAt: optionalTime(d.LastAttemptAt), Error: optional(d.LastError),
		CreatedAt: wire.FormatTime(d.CreatedAt), UpdatedAt: wire.FormatTime(d.UpdatedAt)}
	if d.State == storage.DeliveryPending {
		out.NextAttemptAt = optionalTime(&d.NextAttemptAt)
	}
	if d.LastAttemptAt != nil {
		out.StatusCode, out.Response, out.LatencyMS = &d.LastStatus, &d.LastResponse, &d.LastLatencyMS
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := wire.FormatTime(*t)
	return &s
}
