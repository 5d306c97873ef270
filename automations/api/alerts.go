package api

import (
	"encoding/json"
	"net/http"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// withAlert shows an automation just saved, with its alert state.
func (a *API) withAlert(r *http.Request, au storage.Automation) automationJSON {
	states := map[string]storage.AlertState{}
	if au.Event == storage.EventCallAlert {
		if got, err := a.svc.AlertStates(r.Context(), au.ProjectID); err == nil {
			states = got
		}
	}
	return newAutomation(au, states)
}

// alertHistory is POST /automations/alerts/history: an alert's
// transitions, newest first.
func (a *API) alertHistory(r *http.Request, body []byte) (any, error) {
	var projectID, automationID string
	var limit int
	if _, err := forProject(r, body, &projectID, wire.Fields{"automation_id": &automationID, "limit": &limit}, "automation_id"); err != nil {
		return nil, err
	}
	list, err := a.svc.AlertHistory(r.Context(), projectID, automationID, limit)
	return map[string]any{"transitions": each(list, newTransition)}, err
}

// alertEvaluate is POST /automations/alerts/evaluate: a condition
// measured now, nothing delivered (a UI's "test" button).
func (a *API) alertEvaluate(r *http.Request, body []byte) (any, error) {
	var projectID string
	var condition json.RawMessage
	if _, err := forProject(r, body, &projectID, wire.Fields{"condition": &condition}, "condition"); err != nil {
		return nil, err
	}
	c, m, holds, err := a.svc.EvaluateCondition(r.Context(), projectID, condition)
	if err != nil {
		return nil, err
	}
	state := storage.AlertOK
	if holds {
		state = storage.AlertFiring
	}
	return map[string]any{"state": state, "value": m.Value, "calls": m.Calls, "threshold": c.Threshold,
		"comparator": c.Comparator, "window_start": wire.FormatTime(m.Start), "window_end": wire.FormatTime(m.End),
		"calls_url": a.svc.CallsURL(projectID, c, m)}, nil
}
