package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
)

// writePricedCall stores one ended call in project whose usage costs
// about $2.50 at the default price of gpt-4o.
func (e *env) writePricedCall(project, id string) {
	e.t.Helper()
	now := time.Now().UTC()
	start := map[string]any{"project_id": project, "id": id, "trace_id": "t-" + id, "op_name": "llm",
		"started_at": now.Add(-time.Second).Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": map[string]any{}}
	end := map[string]any{"project_id": project, "id": id, "ended_at": now.Format(time.RFC3339Nano), "output": "ok",
		"summary": map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"requests": 1, "prompt_tokens": 1_000_000,
			"completion_tokens": 0, "total_tokens": 1_000_000}}}}
	e.ok("/call/upsert_batch", map[string]any{"batch": []any{
		map[string]any{"mode": "start", "req": map[string]any{"start": start}},
		map[string]any{"mode": "end", "req": map[string]any{"end": end}}}}, nil)
}

// waitAlertState waits until project's automation id is listed in state.
func (e *env) waitAlertState(project, id, state string) float64 {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var list struct {
			Automations []struct {
				ID    string
				Alert *struct {
					State string
					Value *float64
				}
			}
		}
		e.as(e.admin, "/automations/list", map[string]any{"project_id": project}, &list)
		for _, a := range list.Automations {
			if a.ID == id && a.Alert != nil && a.Alert.State == state && a.Alert.Value != nil {
				return *a.Alert.Value
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("alert %s of %s is not %s after 15s: %+v", id, project, state, list.Automations)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An enforced daily cost budget that is firing makes the gateway refuse
// the project's requests with 429 in the OpenAI error shape naming the
// budget; a budget without enforce only warns.
func TestEnforcedBudgetStopsGatewayRequests(t *testing.T) {
	t.Setenv("WEFT_APP_TEST_KEY", "sk-x")
	e := newEnv(t, func(c *config.Config) {
		c.Inference = gatewayConfig(t, "WEFT_APP_TEST_KEY").Inference
		c.Automations.AllowedNetworks = []string{"127.0.0.0/8"}
		c.Automations.AlertInterval = alertInterval
	})
	rc := newHookReceiver(t, always(http.StatusOK))
	hookID := e.setupHook(rc.srv.URL + "/budgets")
	ids := map[string]string{}
	for project, enforce := range map[string]bool{"acme/app": true, "acme/other": false} {
		var au struct{ ID string }
		e.as(e.admin, "/automations/create", map[string]any{"project_id": project, "name": "daily budget",
			"scope": map[string]any{"type": "project"}, "event": "CALL_ALERT", "webhook_id": hookID, "enabled": true,
			"payload":   map[string]any{"text": "${alert_name}: ${metric} is ${value}"},
			"condition": map[string]any{"metric": "cost", "window_seconds": 86400, "comparator": ">", "threshold": 1, "enforce": enforce}}, &au)
		ids[project] = au.ID
	}
	chat := func(project string) (int, []byte) {
		status, _, body := e.do(http.MethodPost, "/v1/chat/completions", e.member,
			map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, "Service-Project", project)
		return status, body
	}
	if status, body := chat("acme/app"); status == http.StatusTooManyRequests {
		t.Fatalf("under budget: chat = %d %s", status, body)
	}
	e.writePricedCall("acme/app", "c1")
	e.writePricedCall("acme/other", "c1")
	for project, id := range ids {
		if v := e.waitAlertState(project, id, "firing"); v < 2 || v > 3 {
			t.Fatalf("%s: cost = %v, want about 2.50 (1M prompt tokens of gpt-4o)", project, v)
		}
	}
	status, body := chat("acme/app")
	var answer struct {
		Error struct {
			Message, Type string
			Code          *string
		}
	}
	if err := json.Unmarshal(body, &answer); err != nil || status != http.StatusTooManyRequests ||
		answer.Error.Code == nil || *answer.Error.Code != "budget_exceeded" || !strings.Contains(answer.Error.Message, `"daily budget"`) {
		t.Fatalf("over an enforced budget: chat = %d %s, want 429 budget_exceeded naming the budget", status, body)
	}
	status, _, body = e.do(http.MethodPost, "/completions/create", e.member, map[string]any{"project_id": "acme/app",
		"inputs": map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
	if status != http.StatusTooManyRequests || !strings.Contains(string(body), "daily budget") {
		t.Fatalf("over an enforced budget: /completions/create = %d %s, want 429 naming the budget", status, body)
	}
	if status, body := chat("acme/other"); status == http.StatusTooManyRequests || strings.Contains(string(body), "budget") {
		t.Fatalf("over a budget without enforce: chat = %d %s, want the request let through", status, body)
	}
	if n := len(rc.wait(t, 2)); n != 2 {
		t.Fatalf("budget warnings = %d, want one per budget", n)
	}
	// Disabling the budget lets requests through again within an interval or two.
	e.as(e.admin, "/automations/update", map[string]any{"project_id": "acme/app", "id": ids["acme/app"], "enabled": false}, nil)
	deadline := time.Now().Add(3 * alertInterval)
	for {
		status, body := chat("acme/app")
		if status != http.StatusTooManyRequests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a disabled budget still refuses: %d %s", status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
