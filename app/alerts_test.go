package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

// alertInterval is the evaluation interval of the alert tests.
const alertInterval = time.Second

// alertConfig serves dataDir with loopback receivers, quick polling and
// 1-second alert evaluation.
func alertConfig(dataDir string) config.Config {
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Automations.AllowedNetworks = []string{"127.0.0.0/8"}
	cfg.Automations.PollInterval = 50 * time.Millisecond
	cfg.Automations.RequestTimeout = 2 * time.Second
	cfg.Automations.AlertInterval = alertInterval
	cfg.Automations.PublicURL = "https://weft.example.com"
	return cfg
}

// startAlertServer serves cfg; the returned stop closes it (idempotent),
// keeping its data directory.
func startAlertServer(t *testing.T, cfg config.Config) (*env, func()) {
	t.Helper()
	ctx := context.Background()
	srv, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	e := &env{t: t, url: hs.URL, keys: srv.Keys()}
	e.admin = e.newKey(srv.Keys(), "acme", auth.RoleAdmin)
	e.member = e.newKey(srv.Keys(), "acme", auth.RoleMember)
	return e, stop
}

// writeChatCalls stores n ended calls of op chat in acme/app started
// now, the first errors of them with an exception.
func (e *env) writeChatCalls(prefix string, n, errors int) {
	e.t.Helper()
	now := time.Now().UTC()
	var batch []any
	for i := range n {
		id := fmt.Sprintf("%s-%03d", prefix, i)
		start := map[string]any{"project_id": "acme/app", "id": id, "trace_id": "t-" + id, "op_name": "chat",
			"started_at": now.Add(-2 * time.Second).Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": map[string]any{}}
		end := map[string]any{"project_id": "acme/app", "id": id, "ended_at": now.Format(time.RFC3339Nano), "output": "ok", "summary": map[string]any{}}
		if i < errors {
			end["exception"] = "boom"
		}
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": start}},
			map[string]any{"mode": "end", "req": map[string]any{"end": end}})
	}
	e.ok("/call/upsert_batch", map[string]any{"batch": batch}, nil)
}

const alertPayload = `{"text":"${alert_name}: ${metric} is ${value} (threshold ${threshold}) on ${project_name}",
"event_type":"${event_type}","state":"${alert_state}","value":${value},"threshold":${threshold},"comparator":"${comparator}",
"window":${window_seconds},"fired_at":"${fired_at}","calls_url":"${calls_url}","entity":"${entity_name}","sig":"$SIGN"}`

func chatErrorsCondition() map[string]any {
	return map[string]any{"metric": "error_rate", "op_names": []string{"chat"}, "window_seconds": 300,
		"comparator": ">", "threshold": 0.05, "min_calls": 20}
}

// waitQuiet fails when the receiver gets more than n requests within d.
func (h *hookReceiver) waitQuiet(t *testing.T, n int, d time.Duration, why string) {
	t.Helper()
	time.Sleep(d)
	if got := len(h.requests()); got != n {
		t.Fatalf("receiver got %d requests, want %d: %s", got, n, why)
	}
}

func TestCallAlertFiresOnceResolvesOnceAndSurvivesRestart(t *testing.T) {
	dataDir := t.TempDir()
	e, stop := startAlertServer(t, alertConfig(dataDir))
	rc := newHookReceiver(t, always(http.StatusOK))
	hookID := e.setupHook(rc.srv.URL + "/alerts")

	status, _, out := e.do(http.MethodPost, "/automations/create", e.admin, map[string]any{"project_id": "acme/app",
		"name": "too short", "scope": map[string]any{"type": "project"}, "event": "CALL_ALERT", "webhook_id": hookID,
		"enabled": true, "condition": map[string]any{"metric": "error_rate", "window_seconds": 30, "comparator": ">", "threshold": 1}})
	if status != http.StatusBadRequest || !strings.Contains(string(out), "condition.window_seconds") {
		t.Fatalf("a 30 s window = %d %s, want 400 naming condition.window_seconds", status, out)
	}
	var au struct {
		ID         string
		Automation struct {
			Alert struct{ State string }
		}
	}
	e.as(e.admin, "/automations/create", map[string]any{"project_id": "acme/app", "name": "chat errors",
		"scope": map[string]any{"type": "project"}, "event": "CALL_ALERT", "condition": chatErrorsCondition(),
		"webhook_id": hookID, "payload": alertPayload, "enabled": true}, &au)
	if au.Automation.Alert.State != "ok" {
		t.Fatalf("a new alert's state = %q, want ok", au.Automation.Alert.State)
	}

	// 10 errors in 30 calls: over the threshold, with enough calls.
	e.writeChatCalls("a", 30, 10)
	wrote := time.Now()
	firing := rc.wait(t, 1)[0]
	if took := time.Since(wrote); took > 2*alertInterval+time.Second {
		t.Errorf("FIRING arrived %v after the errors, want within two intervals (%v)", took, 2*alertInterval)
	}
	checkSigned(t, firing, "sign-1", "tok-1")
	var body map[string]any
	if err := json.Unmarshal(firing.body, &body); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, firing.body)
	}
	value := 10.0 / 30
	want := map[string]any{"event_type": "CALL_ALERT_FIRING", "state": "firing", "value": value, "threshold": 0.05,
		"comparator": ">", "window": 300.0, "entity": "acme", "sig": "sign-1",
		"text": fmt.Sprintf("chat errors: error_rate is %v (threshold 0.05) on app", value)}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("payload %s = %v, want %v", k, body[k], v)
		}
	}
	if u, _ := body["calls_url"].(string); !strings.HasPrefix(u, "https://weft.example.com/acme/app/calls?") ||
		!strings.Contains(u, "op=chat") || !strings.Contains(u, "status=error") {
		t.Errorf("calls_url = %q, want the UI's calls of chat errors in the window", u)
	}
	e.checkAlertListed(au.ID, "firing", value)
	rc.waitQuiet(t, 1, 2*alertInterval+500*time.Millisecond, "still firing must not deliver again")

	// A restart keeps the state: no second FIRING.
	stop()
	e, _ = startAlertServer(t, alertConfig(dataDir))
	rc.waitQuiet(t, 1, 2*alertInterval+500*time.Millisecond, "a restart must not fire again")

	// 200 more successes bring the rate under 5 %: RESOLVED, once.
	e.writeChatCalls("b", 200, 0)
	resolved := rc.wait(t, 2)[1]
	checkSigned(t, resolved, "sign-1", "tok-1")
	body = nil
	if err := json.Unmarshal(resolved.body, &body); err != nil {
		t.Fatal(err)
	}
	if body["event_type"] != "CALL_ALERT_RESOLVED" || body["state"] != "ok" || body["fired_at"] == "" {
		t.Fatalf("resolved payload = %v", body)
	}
	if resolved.header.Get("webhook-id") == firing.header.Get("webhook-id") {
		t.Fatal("RESOLVED reused FIRING's webhook-id")
	}
	rc.waitQuiet(t, 2, 2*alertInterval+500*time.Millisecond, "resolved must not deliver again")

	var hist struct {
		Transitions []struct {
			Seq   int64
			State string
			Value float64
		}
	}
	e.as(e.admin, "/automations/alerts/history", map[string]any{"project_id": "acme/app", "automation_id": au.ID}, &hist)
	if len(hist.Transitions) != 2 || hist.Transitions[0].State != "ok" || hist.Transitions[0].Seq != 2 ||
		hist.Transitions[1].State != "firing" || hist.Transitions[1].Value != value {
		t.Fatalf("history = %+v, want resolved then firing", hist.Transitions)
	}
	var eval struct {
		State string
		Value float64
		Calls int64
	}
	e.as(e.admin, "/automations/alerts/evaluate", map[string]any{"project_id": "acme/app", "condition": chatErrorsCondition()}, &eval)
	if eval.State != "ok" || eval.Calls != 230 || eval.Value != 10.0/230 {
		t.Fatalf("evaluate = %+v, want ok at 10/230 over 230 calls", eval)
	}
	status, _, out = e.do(http.MethodPost, "/automations/alerts/evaluate", e.admin, map[string]any{"project_id": "acme/app",
		"condition": map[string]any{"metric": "errors", "window_seconds": 300, "comparator": ">", "threshold": 1}})
	if status != http.StatusBadRequest || !strings.Contains(string(out), "condition.metric") {
		t.Fatalf("evaluate an unknown metric = %d %s, want 400 naming condition.metric", status, out)
	}
	if ds := e.deliveries("acme/app", au.ID); len(ds) != 2 {
		t.Fatalf("history has %d deliveries, want 2", len(ds))
	}
}

// checkAlertListed checks /automations/list shows the alert's state.
func (e *env) checkAlertListed(id, state string, value float64) {
	e.t.Helper()
	var list struct {
		Automations []struct {
			ID    string
			Alert *struct {
				State       string
				Value       *float64
				EvaluatedAt *string `json:"evaluated_at"`
				ChangedAt   *string `json:"changed_at"`
			}
		}
	}
	e.as(e.admin, "/automations/list", map[string]any{"project_id": "acme/app"}, &list)
	for _, a := range list.Automations {
		if a.ID != id {
			continue
		}
		if a.Alert == nil || a.Alert.State != state || a.Alert.Value == nil || *a.Alert.Value != value ||
			a.Alert.EvaluatedAt == nil || a.Alert.ChangedAt == nil {
			e.t.Fatalf("listed alert = %+v, want %s at %v with times", a.Alert, state, value)
		}
		return
	}
	e.t.Fatalf("automation %s not listed", id)
}
