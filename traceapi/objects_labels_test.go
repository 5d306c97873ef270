package traceapi_test

import (
	"net/http"
	"slices"
	"testing"
)

func TestObjectTagsAndAliases(t *testing.T) {
	e := newAPIEnv(t)
	d0 := e.publish("acme/app", "prompt", "v0 text")
	d1 := e.publish("acme/app", "prompt", "v1 text")
	e.publish("acme/app", "other", 1)
	body := func(list string, names ...string) map[string]any {
		return map[string]any{"project_id": "acme/app", list: names}
	}
	e.ok(http.MethodPut, "/objs/prompt/versions/"+d0+"/tags", body("tags", "reviewed", "golden set", "reviewed"), nil)
	e.ok(http.MethodPut, "/objs/prompt/versions/v1/tags", body("tags", "draft"), nil)
	e.ok(http.MethodPut, "/objs/prompt/aliases", map[string]any{"project_id": "acme/app", "digest": d0, "aliases": []string{"prod", "stable"}}, nil)
	e.ok(http.MethodPut, "/objs/prompt/aliases", map[string]any{"project_id": "acme/app", "digest": d1, "aliases": []string{"stable"}}, nil)

	if got := e.readObj("acme/app", "prompt", "prod"); got.Digest != d0 {
		t.Errorf("read by alias prod = %s; want %s", got.Digest, d0)
	}
	if got := e.readObj("acme/app", "prompt", "stable"); got.Digest != d1 {
		t.Errorf("alias stable did not move to v1: got %s", got.Digest)
	}
	labelled := e.readObj("acme/app", "prompt", d0, "include_tags_and_aliases")
	if !slices.Equal(labelled.Tags, []string{"golden set", "reviewed"}) || !slices.Equal(labelled.Aliases, []string{"prod"}) {
		t.Errorf("v0 labels: tags %v aliases %v", labelled.Tags, labelled.Aliases)
	}
	if got := e.readObj("acme/app", "prompt", d1, "include_tags_and_aliases"); !slices.Equal(got.Aliases, []string{"latest", "stable"}) {
		t.Errorf("v1 aliases %v; want latest first, then stable", got.Aliases)
	}
	if got := e.readObj("acme/app", "prompt", d0); got.Tags != nil || got.Aliases != nil {
		t.Errorf("labels listed without include_tags_and_aliases: %v %v", got.Tags, got.Aliases)
	}
	assertLabelLists(t, e, []string{"draft", "golden set", "reviewed"}, []string{"latest", "prod", "stable"})

	var res struct{ Objs []objJSON }
	e.ok(http.MethodPost, "/objs/query", map[string]any{"project_id": "acme/app", "filter": map[string]any{"tags": []string{"draft"}}}, &res)
	if len(res.Objs) != 1 || res.Objs[0].Digest != d1 {
		t.Errorf("query by tag draft = %+v", res.Objs)
	}
	e.ok(http.MethodPost, "/objs/query", map[string]any{"project_id": "acme/app", "filter": map[string]any{"aliases": []string{"prod"}}}, &res)
	if len(res.Objs) != 1 || res.Objs[0].Digest != d0 {
		t.Errorf("query by alias prod = %+v", res.Objs)
	}

	e.ok(http.MethodPost, "/objs/prompt/versions/"+d0+"/tags/remove", body("tags", "reviewed", "never-set"), nil)
	e.ok(http.MethodPost, "/objs/prompt/aliases/remove", body("aliases", "prod"), nil)
	assertLabelLists(t, e, []string{"draft", "golden set"}, []string{"latest", "stable"})
	if status, out := e.send(http.MethodPost, "/obj/read", map[string]any{"project_id": "acme/app", "object_id": "prompt", "digest": "prod"}); status != http.StatusNotFound {
		t.Errorf("read by removed alias = %d %s; want 404", status, out)
	}
}

func assertLabelLists(t *testing.T, e *apiEnv, tags, aliases []string) {
	t.Helper()
	var tl struct{ Tags []string }
	e.ok(http.MethodGet, "/tags?project_id=acme/app", nil, &tl)
	var al struct{ Aliases []string }
	e.ok(http.MethodGet, "/aliases?project_id=acme%2Fapp", nil, &al)
	if !slices.Equal(tl.Tags, tags) || !slices.Equal(al.Aliases, aliases) {
		t.Errorf("GET /tags = %v, /aliases = %v; want %v and %v", tl.Tags, al.Aliases, tags, aliases)
	}
	var empty struct{ Tags *[]string }
	e.ok(http.MethodGet, "/tags?project_id=acme/empty", nil, &empty)
	if empty.Tags == nil || len(*empty.Tags) != 0 {
		t.Errorf("tags of an empty project = %v; want []", empty.Tags)
	}
}
