package automations

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftdev/weft/storage"
)

// MaxAlertTransitionsListed bounds an alert's history page.
const MaxAlertTransitionsListed = 1000

// AlertStates returns the states of a project's alerts by automation id.
func (s *Service) AlertStates(ctx context.Context, projectID string) (map[string]storage.AlertState, error) {
	list, err := s.d.Store.AlertStates(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]storage.AlertState, len(list))
	for _, st := range list {
		out[st.AutomationID] = st
	}
	return out, nil
}

// AlertHistory lists an alert's transitions, newest first.
func (s *Service) AlertHistory(ctx context.Context, projectID, automationID string, limit int) ([]storage.AlertTransition, error) {
	a, err := s.d.Store.GetAutomation(ctx, projectID, automationID)
	if err != nil {
		return nil, err
	}
	if a.Event != storage.EventCallAlert {
		return nil, invalid("automation_id", "%s is a %s automation; only CALL_ALERT automations have an alert history", a.ID, a.Event)
	}
	if limit <= 0 || limit > MaxAlertTransitionsListed {
		limit = MaxAlertTransitionsListed
	}
	return s.d.Store.ListAlertTransitions(ctx, projectID, automationID, limit)
}

// EvaluateCondition checks a condition and measures it now over a
// project's calls, delivering nothing.
func (s *Service) EvaluateCondition(ctx context.Context, projectID string, raw json.RawMessage) (Condition, Measurement, bool, error) {
	c, err := ParseCondition(raw)
	if err != nil {
		return c, Measurement{}, false, err
	}
	if s.d.Measure.Calls == nil {
		return c, Measurement{}, false, fmt.Errorf("alert conditions cannot be measured by this server: %w", storage.ErrUnavailable)
	}
	m, err := s.d.Measure.Measure(ctx, projectID, c, s.now())
	if err != nil {
		return c, m, false, err
	}
	return c, m, m.Calls >= c.MinCalls && c.Holds(m.Value), nil
}

// CallsURL links the UI's calls of a measurement's window.
func (s *Service) CallsURL(projectID string, c Condition, m Measurement) string {
	return CallsURL(s.d.PublicURL, projectID, c, m.Start, m.End)
}
