package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAutomationsRoles maps the seed's roles onto keys: team, registry
// and project admins are the entity's admins; members, viewers and other
// entities' admins are refused everything, reads included.
func TestAutomationsRoles(t *testing.T) {
	e := hookEnv(t)
	rc := newHookReceiver(t, always(200))
	hookID := e.setupHook(rc.srv.URL)
	var au struct{ ID string }
	e.as(e.admin, "/automations/create", map[string]any{"project_id": "acme/wandb-registry-m", "name": "a",
		"scope": map[string]any{"type": "registry"}, "event": "LINK_ARTIFACT", "webhook_id": hookID, "enabled": true}, &au)
	entityAdmin := e.adminOf("acme")
	calls := []struct {
		path string
		body map[string]any
	}{
		{"/secrets/create", map[string]any{"entity": "acme", "name": "X", "value": "v"}},
		{"/secrets/list", map[string]any{"entity": "acme"}},
		{"/webhooks/create", map[string]any{"entity": "acme", "name": "w2", "url": rc.srv.URL}},
		{"/webhooks/list", map[string]any{"entity": "acme"}},
		{"/webhooks/test", map[string]any{"entity": "acme", "id": hookID}},
		{"/automations/list", map[string]any{"project_id": "acme/wandb-registry-m"}},
		{"/automations/update", map[string]any{"project_id": "acme/wandb-registry-m", "id": au.ID, "description": "d"}},
		{"/automations/deliveries", map[string]any{"project_id": "acme/wandb-registry-m", "automation_id": au.ID}},
	}
	keys := []struct {
		name, key string
		want      int
	}{
		{"entity admin", entityAdmin, 200},
		{"instance admin", e.admin, 200},
		{"member", e.member, 403},
		{"viewer", e.viewer, 403},
		{"other entity's admin", e.evil, 403},
		{"no key", "", 401},
	}
	for _, c := range calls {
		for _, k := range keys {
			t.Run(c.path+"/"+k.name, func(t *testing.T) {
				body := c.body
				if c.path == "/secrets/create" || c.path == "/webhooks/create" {
					body = withName(body, k.name) // names must stay unique
				}
				status, _, out := e.do(http.MethodPost, c.path, k.key, body)
				if status != k.want {
					t.Fatalf("status %d (%s), want %d", status, out, k.want)
				}
			})
		}
	}
}

func withName(body map[string]any, suffix string) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	out["name"] = strings.ToUpper(strings.NewReplacer(" ", "_", "'", "").Replace(suffix))
	return out
}

// TestAutomationsRefuseBadInput: every bad request is a 4xx naming the
// field and the fix; none is a 500.
func TestAutomationsRefuseBadInput(t *testing.T) {
	e := hookEnv(t)
	rc := newHookReceiver(t, always(200))
	hookID := e.setupHook(rc.srv.URL)
	auto := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"project_id": "acme/models", "name": "n", "scope": map[string]any{"type": "project"},
			"event": "ADD_ARTIFACT_ALIAS", "alias_regex": "^prod", "webhook_id": hookID, "payload": `{}`, "enabled": true}
		mut(m)
		return m
	}
	e.as(e.admin, "/automations/create", auto(func(m map[string]any) { m["name"] = "taken" }), nil)
	tests := []struct {
		name, path string
		body       any
		status     int
		mention    string
	}{
		{"unknown variable", "/automations/create", auto(func(m map[string]any) { m["payload"] = `{"x":"${nope}"}` }), 400, "${nope}"},
		{"nested metadata key", "/automations/create", auto(func(m map[string]any) { m["payload"] = `{"x":"${artifact_metadata.a.b}"}` }), 400, "artifact_metadata.a.b"},
		{"bare unknown secret", "/automations/create", auto(func(m map[string]any) { m["payload"] = `{"x":"$OTHER"}` }), 400, "${OTHER}"},
		{"not JSON", "/automations/create", auto(func(m map[string]any) { m["payload"] = `{"x":` }), 400, "payload"},
		{"unclosed variable", "/automations/create", auto(func(m map[string]any) { m["payload"] = `{"x":"${event_type"}` }), 400, "payload"},
		{"alias event without regex", "/automations/create", auto(func(m map[string]any) { delete(m, "alias_regex") }), 400, "alias_regex"},
		{"bad regex", "/automations/create", auto(func(m map[string]any) { m["alias_regex"] = "(" }), 400, "alias_regex"},
		{"unknown event", "/automations/create", auto(func(m map[string]any) { m["event"] = "RUN_STATE" }), 400, "event"},
		{"registry scope outside a registry", "/automations/create", auto(func(m map[string]any) { m["scope"] = map[string]any{"type": "registry"} }), 400, "wandb-registry-"},
		{"collection scope without collection", "/automations/create", auto(func(m map[string]any) {
			m["project_id"], m["scope"] = "acme/wandb-registry-x", map[string]any{"type": "collection"}
		}), 400, "scope.collection"},
		{"unknown webhook", "/automations/create", auto(func(m map[string]any) { m["webhook_id"] = "wh_nope" }), 400, "webhook_id"},
		{"duplicate name", "/automations/create", auto(func(m map[string]any) { m["name"] = "taken" }), 409, "taken"},
		{"unknown field", "/automations/create", auto(func(m map[string]any) { m["trigger"] = 1 }), 422, "trigger"},
		{"missing field", "/automations/create", auto(func(m map[string]any) { delete(m, "webhook_id") }), 422, "webhook_id"},
		{"delete without confirm", "/automations/delete", map[string]any{"project_id": "acme/models", "id": "au_x"}, 400, "confirm"},
		{"delete a missing one", "/automations/delete", map[string]any{"project_id": "acme/models", "id": "au_x", "confirm": true}, 404, "au_x"},
		{"history of a missing one", "/automations/deliveries", map[string]any{"project_id": "acme/models", "automation_id": "au_x"}, 404, "au_x"},
		{"redeliver a missing one", "/automations/redeliver", map[string]any{"project_id": "acme/models", "delivery_id": "dlv_x"}, 404, "dlv_x"},
		{"secret in use", "/secrets/delete", map[string]any{"entity": "acme", "name": "SIGN"}, 409, "ci"},
		{"webhook in use", "/webhooks/delete", map[string]any{"entity": "acme", "id": hookID}, 409, "taken"},
		{"reserved secret name", "/secrets/create", map[string]any{"entity": "acme", "name": "ACCESS_TOKEN", "value": "v"}, 400, "payload variable"},
		{"bad secret name", "/secrets/create", map[string]any{"entity": "acme", "name": "my-secret", "value": "v"}, 400, "name"},
		{"empty secret", "/secrets/create", map[string]any{"entity": "acme", "name": "E", "value": ""}, 400, "value"},
		{"secret with a line feed", "/secrets/create", map[string]any{"entity": "acme", "name": "E", "value": "tok\nX-Evil: 1"}, 400, "value"},
		{"secret with a carriage return", "/secrets/create", map[string]any{"entity": "acme", "name": "E", "value": "tok\r"}, 400, "value"},
		{"secret with a NUL", "/secrets/create", map[string]any{"entity": "acme", "name": "E", "value": "to\x00k"}, 400, "value"},
		{"rotate to a line feed", "/secrets/create", map[string]any{"entity": "acme", "name": "SIGN", "value": "\nsign"}, 400, "value"},
		{"private webhook URL", "/webhooks/create", map[string]any{"entity": "acme", "name": "p", "url": "http://10.0.0.1/x"}, 400, "allowed_networks"},
		{"metadata address", "/webhooks/create", map[string]any{"entity": "acme", "name": "p", "url": "http://169.254.169.254/"}, 400, "link-local"},
		{"ftp URL", "/webhooks/create", map[string]any{"entity": "acme", "name": "p", "url": "ftp://example.com"}, 400, "scheme"},
		{"missing secret", "/webhooks/create", map[string]any{"entity": "acme", "name": "p", "url": rc.srv.URL, "secret": "NOPE"}, 400, "NOPE"},
		{"same secret twice", "/webhooks/create", map[string]any{"entity": "acme", "name": "p", "url": rc.srv.URL, "secret": "SIGN", "access_token_secret": "SIGN"}, 400, "secret"},
		{"duplicate webhook name", "/webhooks/create", map[string]any{"entity": "acme", "name": "ci", "url": rc.srv.URL}, 409, "ci"},
		{"test a missing webhook", "/webhooks/test", map[string]any{"entity": "acme", "id": "wh_nope"}, 404, "wh_nope"},
		{"test with an unknown variable", "/webhooks/test", map[string]any{"entity": "acme", "id": hookID, "payload": "${nope}"}, 400, "${nope}"},
		{"missing entity", "/secrets/list", map[string]any{}, 422, "entity"},
		{"empty entity", "/secrets/list", map[string]any{"entity": ""}, 400, "entity"},
		{"body not JSON", "/webhooks/list", "nope", 422, "JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, out := e.do(http.MethodPost, tc.path, e.admin, tc.body)
			if status != tc.status || !strings.Contains(string(out), tc.mention) {
				t.Fatalf("status %d %s; want %d mentioning %q", status, out, tc.status, tc.mention)
			}
		})
	}
}

func TestSecretsAreWriteOnly(t *testing.T) {
	e := hookEnv(t)
	e.as(e.admin, "/secrets/create", map[string]any{"entity": "acme", "name": "K", "value": "first-value"}, nil)
	e.as(e.admin, "/secrets/create", map[string]any{"entity": "acme", "name": "K", "value": "rotated-value"}, nil)
	for _, path := range []string{"/secrets/list", "/webhooks/list"} {
		status, _, out := e.do(http.MethodPost, path, e.admin, map[string]any{"entity": "acme"})
		if status != 200 || strings.Contains(string(out), "rotated-value") || strings.Contains(string(out), "first-value") {
			t.Fatalf("%s = %d %s", path, status, out)
		}
	}
	var list struct{ Secrets []map[string]any }
	e.as(e.admin, "/secrets/list", map[string]any{"entity": "acme"}, &list)
	if len(list.Secrets) != 1 || list.Secrets[0]["name"] != "K" || list.Secrets[0]["created_at"] == list.Secrets[0]["updated_at"] {
		t.Fatalf("list after rotation = %v; want K with a later updated_at", list.Secrets)
	}
	e.as(e.admin, "/secrets/delete", map[string]any{"entity": "acme", "name": "K"}, nil)
	e.as(e.admin, "/secrets/list", map[string]any{"entity": "acme"}, &list)
	if len(list.Secrets) != 0 {
		t.Fatalf("after delete: %v", list.Secrets)
	}
}

// TestWebhookTest sends a test through the webhook with its secret in
// the payload and shows the answer; nothing is saved.
func TestWebhookTest(t *testing.T) {
	e := hookEnv(t)
	rc := newHookReceiver(t, always(http.StatusCreated))
	hookID := e.setupHook(rc.srv.URL)
	var res struct {
		Status    int
		Headers   map[string]string
		Body      string
		LatencyMS *int64 `json:"latency_ms"`
	}
	e.as(e.admin, "/webhooks/test", map[string]any{"entity": "acme", "id": hookID,
		"payload": map[string]any{"check": "$SIGN", "type": "${event_type}"}}, &res)
	if res.Status != 201 || res.Headers["x-reply"] != "seen" || res.Body != `{"ok":true}` || res.LatencyMS == nil {
		t.Fatalf("test answer = %+v", res)
	}
	req := rc.wait(t, 1)[0]
	if string(req.body) != `{"check":"sign-1","type":"TEST"}` {
		t.Fatalf("test payload %s", req.body)
	}
	checkSigned(t, hookRequest{header: req.header.Clone(), body: req.body}, "sign-1", "tok-1")
	var hooks struct{ Webhooks []map[string]any }
	e.as(e.admin, "/webhooks/list", map[string]any{"entity": "acme"}, &hooks)
	if len(hooks.Webhooks) != 1 || hooks.Webhooks[0]["secret"] != "SIGN" {
		t.Fatalf("webhooks after a test = %v", hooks.Webhooks)
	}
}

// TestWebhookTestHidesReflectedSecrets: a receiver that echoes the
// request it got shows neither the access token nor the signing secret
// back to the admin running the test.
func TestWebhookTestHidesReflectedSecrets(t *testing.T) {
	e := hookEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Authorization", r.Header.Get("Authorization"))
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		_, _ = io.WriteString(w, r.Header.Get("Authorization")+" ")
		_, _ = io.Copy(w, r.Body)
	}))
	t.Cleanup(srv.Close)
	hookID := e.setupHook(srv.URL)
	var res struct {
		Headers map[string]string
		Body    string
	}
	e.as(e.admin, "/webhooks/test", map[string]any{"entity": "acme", "id": hookID, "payload": map[string]any{"check": "$SIGN"}}, &res)
	if res.Headers["authorization"] != "Bearer ****" || res.Headers["x-echo"] != "Bearer ****" || res.Body != `Bearer **** {"check":"****"}` {
		t.Fatalf("test answer headers %v body %q; want the token and secret as ****", res.Headers, res.Body)
	}
}
