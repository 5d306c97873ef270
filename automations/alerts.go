package automations

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/storage"
)

// AlertsStore is what evaluating alerts reads and writes.
type AlertsStore interface {
	storage.AlertStore
	DispatchStore
}

// MaxAlerts bounds the alert automations one deployment evaluates.
const MaxAlerts = 10_000

// alertsLease names the lease of the process that evaluates alerts.
const alertsLease = "automations.alerts"

// AlertsOptions configure the evaluator.
type AlertsOptions struct {
	Interval time.Duration
	// Owner names this process's lease.
	Owner string
	// PublicURL starts calls_url ("" gives a path).
	PublicURL string
	// Evaluate: this process competes for the lease and evaluates;
	// otherwise it only follows the enforced budgets.
	Evaluate bool
}

// Alerts evaluates CALL_ALERT automations every interval in the one
// process of a deployment that holds the alerts lease, and records each
// change of state with its delivery. Every process keeps the set of
// projects whose enforced budget is firing, for the inference gateway.
type Alerts struct {
	// Loop runs Run between Start and Shutdown: it is a component of
	// the process.
	*lifecycle.Loop
	store   AlertsStore
	measure Measurer
	disp    *Dispatcher
	wake    func()
	opts    AlertsOptions
	logger  *slog.Logger
	now     func() time.Time

	mu       sync.RWMutex
	blocking map[string]string // project -> name of a firing enforced budget
}

// NewAlerts builds the evaluator; wake tells the delivery worker a
// delivery was added.
func NewAlerts(store AlertsStore, measure Measurer, disp *Dispatcher, wake func(), opts AlertsOptions, logger *slog.Logger, now func() time.Time) *Alerts {
	a := &Alerts{store: store, measure: measure, disp: disp, wake: wake, opts: opts, logger: logger, now: now,
		blocking: map[string]string{}}
	a.Loop = lifecycle.NewLoop("alerts", logger, a.Run)
	return a
}

// Run evaluates every interval until ctx ends.
func (a *Alerts) Run(ctx context.Context) error {
	t := time.NewTicker(a.opts.Interval)
	defer t.Stop()
	for {
		if err := a.Round(ctx); err != nil && ctx.Err() == nil {
			a.logger.Warn("alerts: an evaluation round failed; retrying after automations.alert_interval; if it repeats, check the store", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Round is one evaluation: it reads the alerts and their states, and if
// this process holds the lease evaluates each, then refreshes the
// enforced budgets from the states.
func (a *Alerts) Round(ctx context.Context) error {
	autos, err := a.store.AlertAutomations(ctx, MaxAlerts)
	if err != nil {
		return err
	}
	stored, err := a.store.AlertStates(ctx, "")
	if err != nil {
		return err
	}
	states := make(map[string]storage.AlertState, len(stored))
	for _, st := range stored {
		states[alertKey(st.ProjectID, st.AutomationID)] = st
	}
	var evalErr error
	if a.opts.Evaluate {
		evalErr = a.evaluateIfLeader(ctx, autos, states, a.now().UTC().Truncate(time.Microsecond))
	}
	a.refreshBudgets(autos, states)
	return evalErr
}

// evaluateIfLeader evaluates the alerts while this process holds the
// lease, so a deployment evaluates each alert once per interval.
func (a *Alerts) evaluateIfLeader(ctx context.Context, autos []storage.Automation, states map[string]storage.AlertState, now time.Time) error {
	leader, err := a.store.ClaimLease(ctx, alertsLease, a.opts.Owner, now, a.leaseTTL())
	if err != nil {
		return fmt.Errorf("alerts lease: %w", err)
	}
	if !leader {
		return nil
	}
	return a.evaluateAll(ctx, autos, states, now)
}

// leaseTTL outlasts two intervals, so a leader that misses one round
// keeps the lease, and one that died hands it over after three.
func (a *Alerts) leaseTTL() time.Duration { return 3 * a.opts.Interval }

func alertKey(projectID, automationID string) string { return projectID + "\x00" + automationID }

// evaluateAll evaluates each alert, recording transitions one by one
// and the other evaluations together; states is updated in place.
func (a *Alerts) evaluateAll(ctx context.Context, autos []storage.Automation, states map[string]storage.AlertState, now time.Time) error {
	var unchanged []storage.AlertState
	conds := make([]Condition, len(autos))
	parsed := make([]bool, len(autos))
	windows := newRoundWindows()
	for i, au := range autos {
		cond, err := ParseCondition(json.RawMessage(au.Condition))
		if err != nil {
			a.logger.Warn("alerts: an automation's condition no longer parses; it is skipped every round until its condition is fixed with /automations/update", "automation", au.ID, "err", err)
			continue
		}
		conds[i], parsed[i] = cond, true
		windows.plan(cond.windowKey(au.ProjectID))
	}
	for i, au := range autos {
		if !parsed[i] {
			continue
		}
		cond := conds[i]
		m, err := a.measureShared(ctx, windows, au.ProjectID, cond, now)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			a.logger.Warn("alerts: measuring an alert's condition failed; it is skipped this round and measured again after automations.alert_interval; if it repeats, check the store", "project", au.ProjectID, "automation", au.ID, "err", err)
			continue
		}
		key := alertKey(au.ProjectID, au.ID)
		prev, ok := states[key]
		if !ok {
			prev = storage.AlertState{ProjectID: au.ProjectID, AutomationID: au.ID, State: storage.AlertOK, ChangedAt: now}
		}
		next, changed := Step(prev, cond, m, now)
		states[key] = next
		if !changed {
			unchanged = append(unchanged, next)
			continue
		}
		if err := a.transition(ctx, au, cond, prev, next, m); err != nil {
			states[key] = prev
			if ctx.Err() != nil {
				return ctx.Err()
			}
			a.logger.Warn("alerts: recording a transition failed; it is made again next interval; if it repeats, check the store", "automation", au.ID, "err", err)
		}
	}
	return a.store.SaveAlertStates(ctx, unchanged)
}

// measureShared measures c, aggregating its window only when no alert
// before it in the round had the same one, and the windows of all the
// round's alerts on the same calls from one read when they differ in
// length (Measurer.windows).
func (a *Alerts) measureShared(ctx context.Context, windows *roundWindows, projectID string, c Condition, now time.Time) (Measurement, error) {
	key := c.windowKey(projectID)
	w, ok := windows.measured[key]
	if !ok {
		var err error
		if w, err = windows.measure(ctx, a.measure, projectID, c, key, now); err != nil {
			return Measurement{}, err
		}
	}
	return a.measure.value(ctx, projectID, c, w)
}

// Step is one evaluation of an alert in state prev: the condition holds
// when the window has at least MinCalls calls and the value compares
// true. It returns the new state and whether it changed; a change
// counts one more transition.
func Step(prev storage.AlertState, c Condition, m Measurement, now time.Time) (storage.AlertState, bool) {
	state := storage.AlertOK
	if m.Calls >= c.MinCalls && c.Holds(m.Value) {
		state = storage.AlertFiring
	}
	next := prev
	next.Value, next.EvaluatedAt = m.Value, now
	if state == prev.State {
		return next, false
	}
	next.State, next.Seq, next.ChangedAt = state, prev.Seq+1, now
	return next, true
}

// transition records a change with its delivery.
func (a *Alerts) transition(ctx context.Context, au storage.Automation, cond Condition, prev, next storage.AlertState, m Measurement) error {
	t := storage.AlertTransition{ProjectID: au.ProjectID, AutomationID: au.ID, Seq: next.Seq, State: next.State,
		Value: next.Value, Threshold: cond.Threshold, At: next.ChangedAt}
	firedAt := next.ChangedAt
	if next.State == storage.AlertOK {
		firedAt = prev.ChangedAt
	}
	d, err := a.disp.alertDelivery(ctx, alertNotice{automation: au, cond: cond, transition: t, firedAt: firedAt,
		callsURL: CallsURL(a.opts.PublicURL, au.ProjectID, cond, m.Start, m.End)})
	if err != nil {
		return err
	}
	if err := a.store.RecordAlertTransition(ctx, next, t, d); err != nil {
		return err
	}
	a.logger.Info("alerts: state changed", "project", au.ProjectID, "automation", au.ID, "state", next.State, "value", next.Value)
	a.wake()
	return nil
}

// refreshBudgets rebuilds the set of projects an enforced budget blocks.
func (a *Alerts) refreshBudgets(autos []storage.Automation, states map[string]storage.AlertState) {
	blocking := map[string]string{}
	for _, au := range autos {
		if states[alertKey(au.ProjectID, au.ID)].State != storage.AlertFiring {
			continue
		}
		if cond, err := ParseCondition(json.RawMessage(au.Condition)); err == nil && cond.Enforce {
			if _, seen := blocking[au.ProjectID]; !seen {
				blocking[au.ProjectID] = au.Name
			}
		}
	}
	a.mu.Lock()
	a.blocking = blocking
	a.mu.Unlock()
}

// Blocking reports the name of a firing enforced budget of projectID:
// the gateway refuses the project's requests while there is one.
func (a *Alerts) Blocking(projectID string) (string, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	name, ok := a.blocking[projectID]
	return name, ok
}
