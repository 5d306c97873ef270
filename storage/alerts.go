package storage

import (
	"context"
	"time"
)

// EventCallAlert is the event of an automation that watches a condition
// over a project's calls (an alert) rather than artifact changes.
const EventCallAlert = "CALL_ALERT"

// The event types an alert's deliveries carry: the condition became true,
// or stopped being true.
const (
	EventCallAlertFiring   = "CALL_ALERT_FIRING"
	EventCallAlertResolved = "CALL_ALERT_RESOLVED"
)

// Alert states.
const (
	AlertOK     = "ok"
	AlertFiring = "firing"
)

// AlertState is the last evaluation of one alert automation: its state,
// the value measured, and Seq, how many transitions it has made. A
// transition's number (Seq after it) names it, so writing the same
// transition twice is harmless.
type AlertState struct {
	ProjectID    string
	AutomationID string
	State        string
	Value        float64
	Seq          int64
	EvaluatedAt  time.Time
	ChangedAt    time.Time
}

// AlertTransition is one change of an alert's state, as it was measured.
type AlertTransition struct {
	ProjectID    string
	AutomationID string
	Seq          int64
	State        string
	Value        float64
	Threshold    float64
	At           time.Time
}

// AlertStore keeps the state of alert automations and a lease that lets
// one process of a deployment evaluate them.
type AlertStore interface {
	// AlertAutomations returns up to limit enabled CALL_ALERT
	// automations of every project, ordered by project and id.
	AlertAutomations(ctx context.Context, limit int) ([]Automation, error)
	// AlertStates returns the states of a project's alerts, or of every
	// project's when projectID is "".
	AlertStates(ctx context.Context, projectID string) ([]AlertState, error)
	// SaveAlertStates records evaluations that changed no state.
	SaveAlertStates(ctx context.Context, states []AlertState) error
	// RecordAlertTransition stores the new state, the transition and its
	// delivery together: in one transaction where the backend has them,
	// else idempotently (a transition or delivery already stored is left
	// as it is), so a crash part way repeats the same transition.
	RecordAlertTransition(ctx context.Context, s AlertState, t AlertTransition, d Delivery) error
	// ListAlertTransitions returns an alert's transitions, newest first,
	// at most limit.
	ListAlertTransitions(ctx context.Context, projectID, automationID string, limit int) ([]AlertTransition, error)
	// ClaimLease takes or extends the named lease for owner until
	// now+ttl when it is free, expired or already owner's, and reports
	// whether owner holds it.
	ClaimLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
}
