package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/automations/signing"
)

// TestScaleOutDeliversFromTheProcessRole runs ingest, process and query
// on Kafka and ClickHouse: a link made at the ingest role travels as
// events through Kafka, the process role sends the deliveries, and the
// query role shows their history from ClickHouse.
func TestScaleOutDeliversFromTheProcessRole(t *testing.T) {
	got := make(chan delivered, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivered{header: r.Header.Clone(), body: body}
	}))
	defer receiver.Close()
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	key := adminKey(t, dsn)
	// One key file for every role: each must open what another sealed.
	cfg := writeRoleConfig(t, hookConfig+"  secrets_key_file: "+filepath.Join(t.TempDir(), "secrets.key")+"\n")
	ingest := startRoleWith(t, cfg, "ingest", kafka, dsn)
	proc := startRoleWith(t, cfg, "process", kafka, dsn)
	query := startRoleWith(t, cfg, "query", kafka, dsn)

	in := newClient(t, ingest.URL, key)
	in.mustPost("/secrets/create", map[string]any{"entity": "acme", "name": "SIGN", "value": "scale-secret"}, nil)
	var hook struct{ ID string }
	in.mustPost("/webhooks/create", map[string]any{"entity": "acme", "name": "ci", "url": receiver.URL, "secret": "SIGN"}, &hook)
	var au struct{ ID string }
	in.mustPost("/automations/create", map[string]any{"project_id": "acme/wandb-registry-models", "name": "on link",
		"enabled": true, "scope": map[string]any{"type": "registry"}, "event": "LINK_ARTIFACT", "webhook_id": hook.ID,
		"payload": `{"event":"${event_type}","version":"${artifact_version_string}"}`}, &au)
	var obj struct{ Digest string }
	in.mustPost("/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/train", "object_id": "m",
		"val": map[string]any{"acc": 0.9}}}, &obj)
	in.mustPost("/artifacts/link", map[string]any{"project_id": "acme/train", "collection": "m", "version": obj.Digest,
		"registry": "models", "target_collection": "clf", "aliases": []string{"prod"}}, nil)

	var d delivered
	select {
	case d = <-got:
	case <-time.After(60 * time.Second):
		t.Fatalf("no delivery from the process role within 60s; its log:\n%s", proc.stderr)
	}
	if string(d.body) != `{"event":"LINK_ARTIFACT","version":"acme/wandb-registry-models/clf:prod"}` {
		t.Fatalf("payload %s", d.body)
	}
	if err := signing.VerifyService("scale-secret", d.body, d.header.Get(signing.HeaderServiceSignature)); err != nil {
		t.Fatalf("signature: %v", err)
	}
	waitDeliveredAt(t, newClient(t, query.URL, key), "acme/wandb-registry-models", au.ID)
}

type delivered struct {
	header http.Header
	body   []byte
}

// adminKey makes an admin key of entity acme in ClickHouse with the CLI.
func adminKey(t *testing.T, dsn string) string {
	t.Helper()
	out, err := exec.Command(binary(t), "keys", "create", "--clickhouse-dsn", dsn, "--entity", "acme", "--role", "admin").CombinedOutput()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func writeRoleConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(path, []byte("kafka:\n  producer:\n    ack_timeout: 2s\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startRoleWith runs `weft serve` with the given roles and config file.
func startRoleWith(t *testing.T, cfg, roles, kafka, dsn string) *process {
	t.Helper()
	return startWeftArgs(t, []string{"serve", "--config", cfg, "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", t.TempDir(), "--roles", roles, "--kafka-brokers", kafka, "--clickhouse-dsn", dsn})
}

// waitDeliveredAt waits until the automation's one delivery is recorded
// as delivered, as read through c.
func waitDeliveredAt(t *testing.T, c *client, project, automationID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct{ Deliveries []map[string]any }
		c.mustPost("/automations/deliveries", map[string]any{"project_id": project, "automation_id": automationID}, &res)
		if len(res.Deliveries) == 1 && res.Deliveries[0]["status"] == "delivered" {
			return
		}
		if time.Now().After(deadline) {
			raw, _ := json.Marshal(res.Deliveries)
			t.Fatalf("history after 30s: %s", raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
