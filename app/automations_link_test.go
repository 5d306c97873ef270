package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLinkIntoRegistry links two versions into a registry collection:
// the registry-scoped automation fires LINK_ARTIFACT for each, the
// collection-scoped one ADD_ARTIFACT_ALIAS for the link's alias.
func TestLinkIntoRegistry(t *testing.T) {
	e := hookEnv(t)
	rc := newHookReceiver(t, always(http.StatusNoContent))
	hookID := e.setupHook(rc.srv.URL)
	registry := "acme/wandb-registry-models"
	e.as(e.admin, "/automations/create", map[string]any{"project_id": registry, "name": "on link",
		"scope": map[string]any{"type": "registry"}, "event": "LINK_ARTIFACT", "webhook_id": hookID,
		"payload": map[string]any{"e": "${event_type}", "v": "${artifact_version_string}", "i": "${artifact_version_index}"},
		"enabled": true}, nil)
	e.as(e.admin, "/automations/create", map[string]any{"project_id": registry, "name": "on alias",
		"scope": map[string]any{"type": "collection", "collection": "classifier"}, "event": "ADD_ARTIFACT_ALIAS",
		"alias_regex": ".*", "webhook_id": hookID, "payload": `{"e":"${event_type}","a":"${alias}"}`, "enabled": true}, nil)
	d1 := e.publish("acme/training", "run-model", map[string]any{"acc": 0.9})
	d2 := e.publish("acme/training", "run-model", map[string]any{"acc": 0.95})
	var first, second struct {
		ProjectID    string `json:"project_id"`
		VersionIndex int    `json:"version_index"`
		Digest       string `json:"digest"`
	}
	e.as(e.member, "/artifacts/link", map[string]any{"project_id": "acme/training", "collection": "run-model",
		"version": d1, "registry": "models", "target_collection": "classifier"}, &first)
	e.as(e.member, "/artifacts/link", map[string]any{"project_id": "acme/training", "collection": "run-model",
		"version": "latest", "registry": "models", "target_collection": "classifier", "aliases": []string{"production"}}, &second)
	if first.ProjectID != registry || first.VersionIndex != 0 || second.VersionIndex != 1 || second.Digest != d2 {
		t.Fatalf("links = %+v, %+v; want v0 and v1 (digest %s) in %s", first, second, d2, registry)
	}
	got := map[string]bool{}
	for _, r := range rc.wait(t, 3) {
		got[string(r.body)] = true
	}
	for _, want := range []string{
		`{"e":"LINK_ARTIFACT","i":"0","v":"acme/wandb-registry-models/classifier:v0"}`,
		`{"e":"LINK_ARTIFACT","i":"1","v":"acme/wandb-registry-models/classifier:production"}`,
		`{"e":"ADD_ARTIFACT_ALIAS","a":"production"}`,
	} {
		if !got[want] {
			t.Errorf("no delivery %s; got %v", want, got)
		}
	}
	var read struct{ Obj struct{ Aliases []string } }
	e.as(e.member, "/obj/read", map[string]any{"project_id": registry, "object_id": "classifier", "digest": "production",
		"include_tags_and_aliases": true}, &read)
	if !strings.Contains(strings.Join(read.Obj.Aliases, ","), "production") {
		t.Fatalf("registry version aliases = %v", read.Obj.Aliases)
	}
}

// TestLinkNeedsReadAndWrite: linking reads the source and writes the
// registry, both checked before anything is written.
func TestLinkNeedsReadAndWrite(t *testing.T) {
	e := hookEnv(t)
	digest := e.publish("acme/training", "m", map[string]any{"x": 1})
	link := map[string]any{"project_id": "acme/training", "collection": "m", "version": digest, "registry": "models"}
	for _, tc := range []struct {
		name string
		key  string
		want int
	}{
		{"viewer cannot write the registry", e.viewer, 403},
		{"other entity cannot read the source", e.evil, 403},
		{"no key", "", 401},
	} {
		if status, _, body := e.do(http.MethodPost, "/artifacts/link", tc.key, link); status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.want)
		}
	}
	bad := map[string]any{"project_id": "acme/training", "collection": "m", "version": "v9", "registry": "models"}
	if status, _, body := e.do(http.MethodPost, "/artifacts/link", e.member, bad); status != 404 {
		t.Errorf("missing version: %d %s, want 404", status, body)
	}
	bad = map[string]any{"project_id": "acme/training", "collection": "m", "version": digest, "registry": "a/b"}
	if status, _, body := e.do(http.MethodPost, "/artifacts/link", e.member, bad); status != 400 || !strings.Contains(string(body), "registry") {
		t.Errorf("bad registry: %d %s, want 400 naming registry", status, body)
	}
	var res map[string]any
	e.as(e.admin, "/objs/query", map[string]any{"project_id": "acme/wandb-registry-models"}, &res)
	if raw, _ := json.Marshal(res); strings.Contains(string(raw), `"object_id"`) {
		t.Fatalf("refused links wrote to the registry: %s", raw)
	}
}
