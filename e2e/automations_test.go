package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hookConfig lets weft deliver to loopback receivers, quickly.
const hookConfig = `automations:
  allowed_networks: [127.0.0.0/8]
  request_timeout: 2s
  poll_interval: 100ms
  retry: {initial_interval: 200ms, max_interval: 1s, max_elapsed: 10m}
`

// crashReceiver records deliveries; while hang is set it holds each
// request open until the sender goes away.
type crashReceiver struct {
	mu      sync.Mutex
	hang    bool
	ids     []string
	bodies  []string
	arrived chan struct{}
}

func (c *crashReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.ids, c.bodies = append(c.ids, r.Header.Get("webhook-id")), append(c.bodies, string(body))
	hang := c.hang
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
	}
	if hang {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (c *crashReceiver) seen() ([]string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...), append([]string(nil), c.bodies...)
}

// TestDeliveryAcrossSIGKILL kills weft while a delivery is in flight,
// and again right after an alias write is acknowledged: after each
// restart the receiver gets the delivery, with the id it had before.
func TestDeliveryAcrossSIGKILL(t *testing.T) {
	dataDir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(cfg, []byte(hookConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	rc := &crashReceiver{hang: true, arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	p := startWeft(t, dataDir, "--config", cfg)
	c := newClient(t, p.URL, p.AdminKey)
	automationID := setupAutomation(t, c, srv.URL)
	digest := publishVersion(t, c)
	putAlias(t, c, digest, "prod-1")
	select {
	case <-rc.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery attempt within 20s")
	}
	killWeft(t, p) // mid-delivery: the receiver holds the request open

	rc.mu.Lock()
	rc.hang = false
	rc.mu.Unlock()
	p = startWeft(t, dataDir, "--config", cfg)
	c = newClient(t, p.URL, p.AdminKey)
	putAlias(t, c, digest, "prod-2")
	killWeft(t, p) // right after the acknowledgement

	p = startWeft(t, dataDir, "--config", cfg)
	c = newClient(t, p.URL, p.AdminKey)
	history := waitDelivered(t, c, automationID, 2)
	ids, bodies := rc.seen()
	first := ids[0]
	again := 0
	for i, id := range ids {
		if id == first {
			again++
			if bodies[i] != bodies[0] {
				t.Fatalf("the retried delivery changed its body: %q vs %q", bodies[i], bodies[0])
			}
		}
	}
	if again < 2 {
		t.Fatalf("receiver saw delivery %s %d times; the one cut off by the kill must come again (ids %v)", first, again, ids)
	}
	t.Logf("deliveries after two SIGKILLs: %v; receiver saw %v", history, ids)
}

func killWeft(t *testing.T, p *process) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

func setupAutomation(t *testing.T, c *client, url string) string {
	t.Helper()
	c.mustPost("/secrets/create", map[string]any{"entity": "acme", "name": "SIGN", "value": "s3cret"}, nil)
	var hook struct{ ID string }
	c.mustPost("/webhooks/create", map[string]any{"entity": "acme", "name": "ci", "url": url, "secret": "SIGN"}, &hook)
	var au struct{ ID string }
	c.mustPost("/automations/create", map[string]any{"project_id": "acme/models", "name": "prod", "enabled": true,
		"scope": map[string]any{"type": "project"}, "event": "ADD_ARTIFACT_ALIAS", "alias_regex": "^prod-",
		"webhook_id": hook.ID, "payload": `{"alias":"${alias}","version":"${artifact_version_string}"}`}, &au)
	return au.ID
}

func publishVersion(t *testing.T, c *client) string {
	t.Helper()
	var res struct{ Digest string }
	c.mustPost("/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/models", "object_id": "clf",
		"val": map[string]any{"acc": 0.9}}}, &res)
	return res.Digest
}

func putAlias(t *testing.T, c *client, digest, alias string) {
	t.Helper()
	status, out := c.do(http.MethodPut, "/objs/clf/aliases", map[string]any{"project_id": "acme/models", "digest": digest,
		"aliases": []string{alias}})
	if status != http.StatusOK {
		t.Fatalf("PUT aliases = %d: %s", status, out)
	}
}

// waitDelivered waits until the automation has n deliveries, all delivered.
func waitDelivered(t *testing.T, c *client, automationID string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		var res struct{ Deliveries []map[string]any }
		c.mustPost("/automations/deliveries", map[string]any{"project_id": "acme/models", "automation_id": automationID}, &res)
		done := 0
		for _, d := range res.Deliveries {
			if d["status"] == "delivered" {
				done++
			}
		}
		if done == n && len(res.Deliveries) == n {
			return res.Deliveries
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries after 45s: %v; want %d delivered", res.Deliveries, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
