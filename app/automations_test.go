package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/automations/signing"
	"github.com/weftdev/weft/config"
)

// hookEnv is newEnv with loopback receivers allowed and quick retries.
func hookEnv(t *testing.T) *env {
	return newEnv(t, func(c *config.Config) {
		c.Automations.AllowedNetworks = []string{"127.0.0.0/8"}
		c.Automations.Retry = config.AutomationsRetry{InitialInterval: 50 * time.Millisecond, MaxInterval: 200 * time.Millisecond, MaxElapsed: time.Minute}
		c.Automations.PollInterval = 50 * time.Millisecond
		c.Automations.RequestTimeout = 2 * time.Second
	})
}

// hookReceiver is a local webhook endpoint that records what it gets and
// answers with status(n) for the n-th request.
type hookReceiver struct {
	mu     sync.Mutex
	got    []hookRequest
	status func(n int) int
	srv    *httptest.Server
}

type hookRequest struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T, status func(n int) int) *hookReceiver {
	h := &hookReceiver{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, hookRequest{header: r.Header.Clone(), body: body})
		n := len(h.got)
		h.mu.Unlock()
		w.Header().Set("X-Reply", "seen")
		w.WriteHeader(h.status(n))
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func always(code int) func(int) int { return func(int) int { return code } }

// wait returns the first n requests, failing after 15s.
func (h *hookReceiver) wait(t *testing.T, n int) []hookRequest {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		got := append([]hookRequest(nil), h.got...)
		h.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("receiver got %d requests in 15s, want %d", len(h.requests()), n)
	return nil
}

func (h *hookReceiver) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.got...)
}

// as posts with key and decodes a 200 answer into v.
func (e *env) as(key, path string, body, v any) {
	e.t.Helper()
	status, _, out := e.do(http.MethodPost, path, key, body)
	if status != http.StatusOK {
		e.t.Fatalf("POST %s = %d: %s", path, status, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			e.t.Fatalf("POST %s: %v in %s", path, err, out)
		}
	}
}

// setupHook stores secrets TOKEN and SIGN and a webhook using both.
func (e *env) setupHook(url string) string {
	e.t.Helper()
	e.as(e.admin, "/secrets/create", map[string]any{"entity": "acme", "name": "TOKEN", "value": "tok-1"}, nil)
	e.as(e.admin, "/secrets/create", map[string]any{"entity": "acme", "name": "SIGN", "value": "sign-1"}, nil)
	var hook struct{ ID string }
	e.as(e.admin, "/webhooks/create", map[string]any{"entity": "acme", "name": "ci", "url": url,
		"access_token_secret": "TOKEN", "secret": "SIGN"}, &hook)
	return hook.ID
}

// publish creates an object version and returns its digest.
func (e *env) publish(project, id string, val any) string {
	e.t.Helper()
	var res struct{ Digest string }
	e.as(e.member, "/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": id, "val": val}}, &res)
	return res.Digest
}

func (e *env) setAlias(project, id, digest string, aliases ...string) {
	e.t.Helper()
	status, _, out := e.do(http.MethodPut, "/objs/"+id+"/aliases", e.member,
		map[string]any{"project_id": project, "digest": digest, "aliases": aliases})
	if status != http.StatusOK {
		e.t.Fatalf("PUT aliases = %d: %s", status, out)
	}
}

const aliasPayload = `{"event_type":"${event_type}","project":"${project_name}","entity":"${entity_name}",
"author":"${event_author}","collection":"${artifact_collection_name}","version":"${artifact_version}",
"version_string":"${artifact_version_string}","alias":"${alias}","epochs":${artifact_metadata.epochs},
"note":"${artifact_metadata.note}","token":"${ACCESS_TOKEN}","sig":"$SIGN"}`

func TestAliasDeliversSignedPayload(t *testing.T) {
	e := hookEnv(t)
	rc := newHookReceiver(t, always(http.StatusOK))
	hookID := e.setupHook(rc.srv.URL + "/hook")
	var au struct{ ID string }
	e.as(e.admin, "/automations/create", map[string]any{"project_id": "acme/models", "name": "prod alias",
		"scope": map[string]any{"type": "project"}, "event": "ADD_ARTIFACT_ALIAS", "alias_regex": "^prod",
		"webhook_id": hookID, "payload": aliasPayload, "enabled": true}, &au)
	digest := e.publish("acme/models", "classifier", map[string]any{"epochs": 12, "note": `say "hi"`})
	e.setAlias("acme/models", "classifier", digest, "staging", "production")
	req := rc.wait(t, 1)[0]
	var body map[string]any
	if err := json.Unmarshal(req.body, &body); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, req.body)
	}
	want := map[string]any{"event_type": "ADD_ARTIFACT_ALIAS", "project": "models", "entity": "acme",
		"collection": "classifier", "version": "weave:///acme/models/object/classifier:" + digest,
		"version_string": "acme/models/classifier:production", "alias": "production", "epochs": 12.0,
		"note": `say "hi"`, "token": "tok-1", "sig": "sign-1"}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("payload %s = %v, want %v", k, body[k], v)
		}
	}
	if body["author"] == "" {
		t.Error("event_author is empty")
	}
	checkSigned(t, req, "sign-1", "tok-1")
	if !strings.HasPrefix(req.header.Get("webhook-id"), "dlv_") {
		t.Fatalf("webhook-id %q", req.header.Get("webhook-id"))
	}
	deliveries := e.waitHistory("acme/models", au.ID, 1)
	if p := deliveries[0]["payload"].(string); strings.Contains(p, "tok-1") || strings.Contains(p, "sign-1") {
		t.Fatalf("history shows secret values: %s", p)
	}
	e.as(e.admin, "/automations/redeliver", map[string]any{"project_id": "acme/models", "delivery_id": deliveries[0]["id"]}, nil)
	again := rc.wait(t, 2)[1]
	if again.header.Get("webhook-id") != req.header.Get("webhook-id") || string(again.body) != string(req.body) {
		t.Fatalf("redelivery changed id or body: %s vs %s", again.header.Get("webhook-id"), req.header.Get("webhook-id"))
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(rc.requests()); n != 2 {
		t.Fatalf("receiver got %d requests; staging must not fire the ^prod automation", n)
	}
}

// checkSigned verifies every header the seed and Standard Webhooks ask for.
func checkSigned(t *testing.T, req hookRequest, secret, token string) {
	t.Helper()
	h := req.header
	if h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "Bearer "+token {
		t.Fatalf("headers: %v", h)
	}
	if err := signing.VerifyService(secret, req.body, h.Get("X-Service-Signature")); err != nil {
		t.Fatalf("X-Service-Signature: %v", err)
	}
	if err := signing.VerifyStandard(secret, h, req.body, time.Now(), time.Minute); err != nil {
		t.Fatalf("webhook-signature: %v", err)
	}
}

// adminOf makes an admin key of entity.
func (e *env) adminOf(entity string) string { return e.newKey(e.keys, entity, auth.RoleAdmin) }

func (e *env) deliveries(project, automationID string) []map[string]any {
	e.t.Helper()
	var res struct{ Deliveries []map[string]any }
	e.as(e.admin, "/automations/deliveries", map[string]any{"project_id": project, "automation_id": automationID}, &res)
	return res.Deliveries
}

// TestRetriedUntilAccepted: a receiver failing twice gets three attempts
// with one delivery id and ends with one success in the history.
func TestRetriedUntilAccepted(t *testing.T) {
	e := hookEnv(t)
	rc := newHookReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	hookID := e.setupHook(rc.srv.URL)
	var au struct{ ID string }
	e.as(e.admin, "/automations/create", map[string]any{"project_id": "acme/models", "name": "any alias",
		"scope": map[string]any{"type": "project", "collection": ""}, "collection_filter": "classifier",
		"event": "ADD_ARTIFACT_ALIAS", "alias_regex": ".", "webhook_id": hookID, "enabled": true}, &au)
	digest := e.publish("acme/models", "classifier", map[string]any{"x": 1})
	other := e.publish("acme/models", "other", map[string]any{"x": 2})
	e.setAlias("acme/models", "other", other, "best") // filtered out by collection_filter
	e.setAlias("acme/models", "classifier", digest, "best")
	reqs := rc.wait(t, 3)
	for _, r := range reqs {
		if r.header.Get("webhook-id") != reqs[0].header.Get("webhook-id") {
			t.Fatalf("attempts carried different ids: %q, %q", r.header.Get("webhook-id"), reqs[0].header.Get("webhook-id"))
		}
	}
	e.waitHistory("acme/models", au.ID, 3)
	_, _, metrics := e.do(http.MethodGet, "/metrics", "", nil)
	for _, line := range []string{"weft_automations_deliveries_delivered 1", "weft_automations_delivery_retries 2",
		"weft_automations_deliveries_pending 0"} {
		if !strings.Contains(string(metrics), line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("receiver got %d requests, want 3 (the other collection must not fire)", n)
	}
}

// waitHistory waits for an automation's one delivery to be recorded as
// delivered after attempts attempts, with a 200.
func (e *env) waitHistory(project, automationID string, attempts int) []map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := e.deliveries(project, automationID)
		if len(d) == 1 && d[0]["status"] == "delivered" && d[0]["attempts"] == float64(attempts) && d[0]["response_status"] == 200.0 {
			return d
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("history = %v; want one delivery, delivered after %d attempts", d, attempts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
