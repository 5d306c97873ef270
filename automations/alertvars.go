package automations

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/automations/template"
	"github.com/weftdev/weft/storage"
)

// Payload variables of CALL_ALERT automations, besides project_name,
// entity_name, event_type, the access token and the webhook's secret.
const (
	VarAlertName     = "alert_name"
	VarMetric        = "metric"
	VarValue         = "value"
	VarThreshold     = "threshold"
	VarComparator    = "comparator"
	VarWindowSeconds = "window_seconds"
	VarAlertState    = "alert_state"
	VarFiredAt       = "fired_at"
	VarCallsURL      = "calls_url"
)

var alertVarNames = []string{VarAlertName, VarMetric, VarValue, VarThreshold, VarComparator, VarWindowSeconds,
	VarAlertState, VarFiredAt, VarCallsURL, VarProjectName, VarEntityName, VarEventType}

// knownAlertVars says which variables an alert's payloads sent to w may
// use.
func knownAlertVars(w storage.Webhook) func(string) bool {
	return func(name string) bool {
		switch {
		case slices.Contains(alertVarNames, name):
			return true
		case name == VarAccessToken:
			return w.AccessTokenSecret != ""
		}
		return name == w.SigningSecret && name != ""
	}
}

// alertNotice is what one alert delivery tells: the transition, when the
// alert fired (the transition's time for a firing) and the link to the
// window's calls.
type alertNotice struct {
	automation storage.Automation
	cond       Condition
	transition storage.AlertTransition
	firedAt    time.Time
	callsURL   string
}

// eventType is the event type a transition's delivery carries.
func (n alertNotice) eventType() string {
	if n.transition.State == storage.AlertFiring {
		return storage.EventCallAlertFiring
	}
	return storage.EventCallAlertResolved
}

// alertVars are a notice's variables for one delivery.
func alertVars(n alertNotice, c credentials) template.Lookup {
	entity, project, _ := strings.Cut(n.automation.ProjectID, "/")
	fixed := map[string]string{
		VarAlertName: n.automation.Name, VarMetric: n.cond.Metric, VarComparator: n.cond.Comparator,
		VarAlertState: n.transition.State, VarFiredAt: n.firedAt.UTC().Format(time.RFC3339Nano), VarCallsURL: n.callsURL,
		VarProjectName: project, VarEntityName: entity, VarEventType: n.eventType(),
	}
	numbers := map[string]string{
		VarValue:         strconv.FormatFloat(n.transition.Value, 'g', -1, 64),
		VarThreshold:     strconv.FormatFloat(n.cond.Threshold, 'g', -1, 64),
		VarWindowSeconds: strconv.FormatInt(n.cond.WindowSeconds, 10),
	}
	return func(name string) (json.RawMessage, bool) {
		if v, ok := fixed[name]; ok {
			return template.String(v), true
		}
		if v, ok := numbers[name]; ok {
			return json.RawMessage(v), true
		}
		switch {
		case name == VarAccessToken && c.token != "":
			return template.String(c.token), true
		case name == c.secretName && c.secretName != "":
			return template.String(c.secret), true
		}
		return nil, false
	}
}

// sampleAlertNotice fills an alert payload's variables when it is checked.
func sampleAlertNotice(a storage.Automation, c Condition, at time.Time) alertNotice {
	return alertNotice{automation: a, cond: c, firedAt: at, callsURL: CallsURL("", a.ProjectID, c, at, at),
		transition: storage.AlertTransition{State: storage.AlertFiring, Value: c.Threshold, At: at}}
}

// CallsURL links the UI's calls page of a project filtered to a window:
// every call (not only trace roots) started in [start, end), of the
// condition's ops, only errors for the error metrics. base is the UI's
// address ("" gives a path).
func CallsURL(base, projectID string, c Condition, start, end time.Time) string {
	q := url.Values{}
	q.Set("all", "1")
	q.Set("from", start.UTC().Format(time.RFC3339))
	q.Set("to", end.UTC().Format(time.RFC3339))
	if len(c.OpNames) == 1 {
		q.Set("op", c.OpNames[0])
	}
	if c.Metric == MetricErrorCount || c.Metric == MetricErrorRate {
		q.Set("status", "error")
	}
	return strings.TrimSuffix(base, "/") + "/" + projectID + "/calls?" + q.Encode()
}
