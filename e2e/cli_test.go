package e2e

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKeysCLIWhileServing creates, uses and revokes a key with the CLI
// against the data dir of a running server.
func TestKeysCLIWhileServing(t *testing.T) {
	dir := t.TempDir()
	p := startWeft(t, dir)
	out, err := exec.Command(binary(t), "keys", "create", "--data-dir", dir, "--entity", "acme", "--role", "viewer").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, KeyPrefix) {
		t.Fatalf("last line %q is not a key", key)
	}
	c := newClient(t, p.URL, key)
	read := map[string]any{"project_id": "acme/p"}
	eventually(t, func() bool { s, _ := c.post("/calls/query_stats", read); return s == http.StatusOK })
	if s, _ := c.post("/call/start", map[string]any{"start": map[string]any{"project_id": "acme/p", "op_name": "o", "started_at": "2025-01-01T00:00:00Z"}}); s != http.StatusForbidden {
		t.Fatalf("viewer write = %d, want 403", s)
	}
	list, err := exec.Command(binary(t), "keys", "list", "--data-dir", dir).Output()
	if err != nil || !strings.Contains(string(list), "acme") || strings.Contains(string(list), key) {
		t.Fatalf("keys list (%v):\n%s", err, list)
	}
	id := keyIDFor(t, string(list), "acme")
	if out, err := exec.Command(binary(t), "keys", "revoke", "--data-dir", dir, id).CombinedOutput(); err != nil {
		t.Fatalf("keys revoke: %v %s", err, out)
	}
	eventually(t, func() bool { s, _ := c.post("/calls/query_stats", read); return s == http.StatusUnauthorized })
}

func keyIDFor(t *testing.T, list, entity string) string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[1] == entity {
			return f[0]
		}
	}
	t.Fatalf("no key for %s in:\n%s", entity, list)
	return ""
}

// TestSIGTERMFlushesAndExitsZero stops a server with SIGTERM right after
// writes were acknowledged and finds them after a restart.
func TestSIGTERMFlushesAndExitsZero(t *testing.T) {
	dir := t.TempDir()
	p := startWeft(t, dir)
	c := newClient(t, p.URL, p.AdminKey)
	ids, body := upsertBody("acme/p", "term", 20)
	c.mustPost("/call/upsert_batch", body, nil)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("weft did not exit within 30s of SIGTERM")
	}
	if !strings.Contains(p.stderr.String(), "shutdown complete") {
		t.Fatalf("no orderly shutdown in log:\n%s", p.stderr)
	}
	p2 := startWeft(t, dir)
	got := readAllCalls(t, newClient(t, p2.URL, p2.AdminKey), "acme/p")
	for _, id := range ids {
		if _, ok := got[id]; !ok {
			t.Fatalf("call %s missing after SIGTERM and restart", id)
		}
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
