package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// alertsConfig evaluates alerts every second.
const alertsConfig = hookConfig + "  alert_interval: 1s\n"

// TestScaleOutEvaluatesEachAlertOnce runs two API replicas (every role)
// on one ClickHouse and Kafka: each alert fires once, from one replica,
// however many run; when that replica is killed the other takes over
// and sends the next transition.
func TestScaleOutEvaluatesEachAlertOnce(t *testing.T) {
	// Deliveries are at-least-once: two replicas' workers may both send
	// one (same webhook-id), which receivers drop. Counted here is each
	// webhook-id once, so a second transition would show.
	var mu sync.Mutex
	got := map[string][]string{} // alert name -> event types
	seen := map[string]bool{}    // webhook-ids
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct{ ID, Event string }
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		if id := r.Header.Get("webhook-id"); !seen[id] {
			seen[id] = true
			got[p.ID] = append(got[p.ID], p.Event)
		}
		mu.Unlock()
	}))
	defer receiver.Close()
	deliveries := func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for k, v := range got {
			out[k] = append([]string(nil), v...)
		}
		return out
	}
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	key := adminKey(t, dsn)
	cfg := writeRoleConfig(t, alertsConfig+"  secrets_key_file: "+filepath.Join(t.TempDir(), "secrets.key")+"\n")
	replicas := []*process{
		startRoleWith(t, cfg, "ingest,process,query", kafka, dsn),
		startRoleWith(t, cfg, "ingest,process,query", kafka, dsn),
	}
	c := newClient(t, replicas[0].URL, key)
	var hook struct{ ID string }
	c.mustPost("/webhooks/create", map[string]any{"entity": "acme", "name": "alerts", "url": receiver.URL}, &hook)
	// call_count >= 0 holds at once: each alert fires on its first evaluation.
	var ids []string
	for i := range 3 {
		var au struct{ ID string }
		c.mustPost("/automations/create", map[string]any{"project_id": "acme/app", "name": fmt.Sprintf("always %d", i),
			"enabled": true, "scope": map[string]any{"type": "project"}, "event": "CALL_ALERT", "webhook_id": hook.ID,
			"payload":   `{"id":"${alert_name}","event":"${event_type}"}`,
			"condition": map[string]any{"metric": "call_count", "window_seconds": 60, "comparator": ">=", "threshold": 0}}, &au)
		ids = append(ids, au.ID)
	}
	waitFor(t, 60*time.Second, "one FIRING per alert", func() bool { return len(deliveries()) == 3 })
	time.Sleep(4 * time.Second) // four more intervals on two replicas
	for name, events := range deliveries() {
		if len(events) != 1 || events[0] != "CALL_ALERT_FIRING" {
			t.Fatalf("%s got %v, want one FIRING", name, events)
		}
	}
	leader := -1
	for i, r := range replicas {
		if n := strings.Count(r.stderr.String(), "alerts: state changed"); n == 3 {
			leader = i
		} else if n != 0 {
			t.Fatalf("replica %d recorded %d transitions; one replica must record all 3", i, n)
		}
	}
	if leader < 0 {
		t.Fatal("no replica logged the transitions")
	}
	for _, id := range ids {
		var hist struct{ Transitions []map[string]any }
		newClient(t, replicas[1-leader].URL, key).mustPost("/automations/alerts/history",
			map[string]any{"project_id": "acme/app", "automation_id": id}, &hist)
		if len(hist.Transitions) != 1 {
			t.Fatalf("history of %s = %v, want one transition", id, hist.Transitions)
		}
	}

	// Kill the evaluating replica; the other takes the lease over and
	// resolves an alert whose condition no longer holds.
	replicas[leader].kill()
	other := newClient(t, replicas[1-leader].URL, key)
	other.mustPost("/automations/update", map[string]any{"project_id": "acme/app", "id": ids[0],
		"condition": map[string]any{"metric": "call_count", "window_seconds": 60, "comparator": "<", "threshold": 0}}, nil)
	waitFor(t, 30*time.Second, "RESOLVED from the surviving replica", func() bool { return len(deliveries()["always 0"]) == 2 })
	time.Sleep(2 * time.Second)
	if d := deliveries(); len(d["always 0"]) != 2 || d["always 0"][1] != "CALL_ALERT_RESOLVED" || len(d["always 1"]) != 1 {
		t.Fatalf("after the handover: %v; want always 0 resolved once and the others not repeated", d)
	}
}

// waitFor polls cond until it holds, failing after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
