package tssdk_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/automations/signing"
	"github.com/weftdev/weft/config"
)

// delivered is one request a local webhook receiver got.
type delivered struct {
	header http.Header
	body   []byte
}

// TestPublishAndAliasDelivers: an object published by the TypeScript SDK
// and then aliased makes a local receiver get the rendered payload,
// signed as the seed describes and as Standard Webhooks does.
func TestPublishAndAliasDelivers(t *testing.T) {
	node := requireNodeDeps(t)
	got := make(chan delivered, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivered{header: r.Header.Clone(), body: body}
	}))
	defer receiver.Close()
	url, newKey, logs := serveWeft(t, func(c *config.Config) {
		c.Automations.AllowedNetworks = []string{"127.0.0.0/8"}
		c.Automations.PollInterval = 50 * time.Millisecond
	})
	admin := &client{t: t, base: url, key: newKey("acme", auth.RoleAdmin, "team-admin")}
	member := newKey("acme", auth.RoleMember, sdkUser)
	hookID := setupWebhook(t, admin, receiver.URL)
	var au struct{ ID string }
	admin.ok(t, "/automations/create", map[string]any{"project_id": project, "name": "deploy on prod", "enabled": true,
		"scope": map[string]any{"type": "project"}, "collection_filter": "classifier", "event": "ADD_ARTIFACT_ALIAS",
		"alias_regex": "^production$", "webhook_id": hookID,
		"payload": `{"event_type":"${event_type}","client_payload":{"author":"${event_author}","version":"${artifact_version}",` +
			`"version_string":"${artifact_version_string}","epochs":${artifact_metadata.epochs},"note":"${artifact_metadata.note}",` +
			`"framework":"${artifact_metadata.framework}","token":"${ACCESS_TOKEN}"}}`}, &au)

	var published struct{ Digest string }
	runNodeScript(t, node, "publish.mjs", &published, "WANDB_API_KEY="+member, "WF_TRACE_SERVER_URL="+url, "WEFT_PROJECT="+project)
	if published.Digest == "" {
		t.Fatalf("publish.mjs result: %+v", published)
	}
	putAliases(t, url, member, published.Digest, "production")

	var d delivered
	select {
	case d = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery within 20s of the alias")
	}
	checkDelivery(t, d, published.Digest)
	if errs := logs.errors(); errs != "" {
		t.Errorf("weft logged errors:\n%s", errs)
	}
}

func setupWebhook(t *testing.T, admin *client, url string) string {
	t.Helper()
	var ignored, hook map[string]any
	admin.ok(t, "/secrets/create", map[string]any{"entity": "acme", "name": "GITHUB_TOKEN", "value": "ghp-test"}, &ignored)
	admin.ok(t, "/secrets/create", map[string]any{"entity": "acme", "name": "HOOK_SECRET", "value": "my-webhook-secret"}, &ignored)
	admin.ok(t, "/webhooks/create", map[string]any{"entity": "acme", "name": "github", "url": url,
		"access_token_secret": "GITHUB_TOKEN", "secret": "HOOK_SECRET"}, &hook)
	return hook["id"].(string)
}

func putAliases(t *testing.T, url, key, digest string, aliases ...string) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"project_id": project, "digest": digest, "aliases": aliases})
	req, _ := http.NewRequest(http.MethodPut, url+"/objs/classifier/aliases", bytes.NewReader(raw))
	req.SetBasicAuth("api", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT aliases = %d: %s", resp.StatusCode, out)
	}
}

func checkDelivery(t *testing.T, d delivered, digest string) {
	t.Helper()
	if d.header.Get("Authorization") != "Bearer ghp-test" || d.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", d.header)
	}
	if err := signing.VerifyService("my-webhook-secret", d.body, d.header.Get("X-Service-Signature")); err != nil {
		t.Errorf("X-Service-Signature: %v", err)
	}
	if err := signing.VerifyStandard("my-webhook-secret", d.header, d.body, time.Now(), 5*time.Minute); err != nil {
		t.Errorf("Standard Webhooks signature: %v", err)
	}
	var body struct {
		EventType     string         `json:"event_type"`
		ClientPayload map[string]any `json:"client_payload"`
	}
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, d.body)
	}
	want := map[string]any{"author": sdkUser, "version": "weave:///" + project + "/object/classifier:" + digest,
		"version_string": project + "/classifier:production", "epochs": 12.0, "note": `say "hi" </b>`,
		"framework": "onnx", "token": "ghp-test"}
	if body.EventType != "ADD_ARTIFACT_ALIAS" {
		t.Errorf("event_type %q", body.EventType)
	}
	for k, v := range want {
		if body.ClientPayload[k] != v {
			t.Errorf("client_payload.%s = %v, want %v", k, body.ClientPayload[k], v)
		}
	}
}
