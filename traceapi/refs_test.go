package traceapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
)

func (e *apiEnv) readRefs(refs ...string) []json.RawMessage {
	e.t.Helper()
	var res struct{ Vals []json.RawMessage }
	e.ok(http.MethodPost, "/refs/read_batch", map[string]any{"refs": refs}, &res)
	if len(res.Vals) != len(refs) {
		e.t.Fatalf("%d vals for %d refs", len(res.Vals), len(refs))
	}
	return res.Vals
}

func TestRefsReadBatch(t *testing.T) {
	e := newAPIEnv(t)
	table, rowDigests := e.createTable("acme/app", map[string]any{"q": "2+2"}, map[string]any{"q": "3+3"})
	ds := e.publish("acme/app", "ds", map[string]any{"_type": "Dataset", "rows": "weave:///acme/app/table/" + table})
	doc := e.publish("acme/app", "doc", map[string]any{"a": map[string]any{"b": []int{10, 20}}, "data": "weave:///acme/app/object/ds:" + ds})
	gone := e.publish("acme/app", "gone", 1)
	e.ok(http.MethodPost, "/obj/delete", map[string]any{"project_id": "acme/app", "object_id": "gone"}, nil)
	base := "weave:///acme/app/object/"
	tests := []struct{ ref, want string }{
		{base + "doc:" + doc + "/key/a/key/b/index/1", `20`},
		{base + "ds:" + ds + "/attr/rows/id/" + rowDigests[1], `{"q":"3+3"}`},
		{base + "doc:" + doc + "/key/data/attr/rows/id/" + rowDigests[0], `{"q":"2+2"}`},
		{base + "doc:" + doc + "/key/missing", `null`},
		{base + "doc:" + doc + "/key/a/key/b/index/9", `null`},
		{base + "gone:" + gone, `null`},
		{base + "nothing:" + strings.Repeat("N", 43), `null`},
	}
	var refs []string
	for _, tt := range tests {
		refs = append(refs, tt.ref)
	}
	for i, v := range e.readRefs(refs...) {
		if !jsonEqual(t, v, json.RawMessage(tests[i].want)) {
			t.Errorf("%s = %s; want %s", tests[i].ref, v, tests[i].want)
		}
	}
	if _, out := e.send(http.MethodPost, "/refs/read_batch", `{"refs":[]}`); string(out) != "{\"vals\":[]}\n" {
		t.Errorf("an empty batch answered %s; want vals: []", out)
	}
}

// TestEntityIsolation: a key of entity acme can never read, list or infer
// evil's objects, tables, refs or threads.
func TestEntityIsolation(t *testing.T) {
	e := newAPIEnv(t)
	e.caller = principal("evil", auth.RoleAdmin)
	secret := e.publish("evil/app", "secret", map[string]any{"password": "hunter2"})
	e.ok(http.MethodPut, "/objs/secret/versions/"+secret+"/tags", map[string]any{"project_id": "evil/app", "tags": []string{"classified"}}, nil)
	table, rows := e.createTable("evil/app", map[string]any{"card": "4111"})
	e.writeTurn("evil/app", "t1", "evil-thread", "t1", time.Minute, time.Second)

	e.caller = principal("acme", auth.RoleAdmin)
	evilRef := "weave:///evil/app/object/secret:" + secret
	pointer := e.publish("acme/app", "pointer", map[string]any{"leak": evilRef, "rows": "weave:///evil/app/table/" + table})
	e.writeTurn("acme/app", "m1", "mine", "m1", time.Minute, time.Second)

	vals := e.readRefs(evilRef, "weave:///evil/app/object/ghost:"+strings.Repeat("G", 43),
		"weave:///acme/app/object/pointer:"+pointer+"/key/leak/key/password",
		"weave:///acme/app/object/pointer:"+pointer+"/key/rows/id/"+rows[0],
		"weave:///acme/app/object/pointer:"+pointer+"/key/leak")
	for i, want := range []string{"null", "null", "null", "null", `"` + evilRef + `"`} {
		if string(vals[i]) != want {
			t.Errorf("ref %d resolved to %s; want %s", i, vals[i], want)
		}
	}
	existing, ghost := forbiddenAnswers(t, e, "evil/app", secret, table), forbiddenAnswers(t, e, "evil/ghost", secret, table)
	for path, body := range existing {
		if ghost[path] != body {
			t.Errorf("%s answers differ for an existing and a missing project:\n%s\n%s", path, body, ghost[path])
		}
	}
	if got := threadIDs(e.threads(map[string]any{"project_id": "acme/app"})); len(got) != 1 || got[0] != "mine" {
		t.Errorf("acme's threads: %v", got)
	}
	var tags struct{ Tags []string }
	e.ok(http.MethodGet, "/tags?project_id=acme/app", nil, &tags)
	if len(tags.Tags) != 0 {
		t.Errorf("acme's tags list evil's: %v", tags.Tags)
	}
}

// forbiddenAnswers reads project with every read endpoint, checks each
// answer is a 403 that reveals none of the data, and returns the bodies.
func forbiddenAnswers(t *testing.T, e *apiEnv, project, objDigest, tableDigest string) map[string]string {
	t.Helper()
	p := func(kv ...any) map[string]any {
		m := map[string]any{"project_id": project}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	reads := map[string]any{
		"/obj/read":                p("object_id", "secret", "digest", objDigest),
		"/objs/query":              p(),
		"/table/query":             p("digest", tableDigest),
		"/table/query_stream":      p("digest", tableDigest),
		"/table/query_stats":       p("digest", tableDigest),
		"/table/query_stats_batch": p("digests", []string{tableDigest}, "include_storage_size", true),
		"/threads/stream_query":    p(),
		"GET /tags":                nil,
		"GET /aliases":             nil,
	}
	out := map[string]string{}
	for path, body := range reads {
		method := http.MethodPost
		if m, rest, ok := strings.Cut(path, " "); ok {
			method, path = m, rest+"?project_id="+project
		}
		status, raw := e.send(method, path, body)
		if status != http.StatusForbidden {
			t.Errorf("%s %s = %d %s; want 403", method, path, status, raw)
		}
		for _, leak := range []string{"hunter2", "4111", "evil-thread", "classified", "secret"} {
			if bytes.Contains(raw, []byte(leak)) {
				t.Errorf("%s %s reveals %q: %s", method, path, leak, raw)
			}
		}
		out[strings.Split(path, "?")[0]] = string(raw)
	}
	return out
}
