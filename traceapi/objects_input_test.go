package traceapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/traceapi"
)

// TestBadInputAnswers checks that every endpoint of objects, refs, tables
// and threads answers bad input with the documented status and a message
// that names the field.
func TestBadInputAnswers(t *testing.T) {
	e := newAPIEnv(t)
	d := e.publish("acme/app", "cfg", map[string]any{"k": 1})
	var table struct{ Digest string }
	e.ok("POST", "/table/create", map[string]any{"table": map[string]any{"project_id": "acme/app", "rows": []any{map[string]any{"a": 1}}}}, &table)
	obj := func(id string, val any) map[string]any {
		return map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": id, "val": val}}
	}
	read := func(sel string) map[string]any {
		return map[string]any{"project_id": "acme/app", "object_id": "cfg", "digest": sel}
	}
	tests := []struct {
		name, method, path string
		body               any
		status             int
		mention            string
	}{
		{"unknown top-level key", "POST", "/obj/create", `{"obj":{"project_id":"acme/app","object_id":"x","val":1},"extra":1}`, 422, "extra"},
		{"not JSON", "POST", "/obj/create", `{"obj":`, 422, "not valid JSON"},
		{"not an object", "POST", "/obj/create", `[1]`, 422, "JSON object"},
		{"obj missing", "POST", "/obj/create", `{}`, 422, "obj"},
		{"project_id wrong type", "POST", "/obj/create", `{"obj":{"project_id":7,"object_id":"x","val":1}}`, 422, "obj.project_id"},
		{"val missing", "POST", "/obj/create", `{"obj":{"project_id":"acme/app","object_id":"x"}}`, 422, "obj.val"},
		{"invalid object id", "POST", "/obj/create", obj("bad id!", 1), 422, "object_id"},
		{"empty object id", "POST", "/obj/create", obj("", 1), 422, "object_id"},
		{"bad project id", "POST", "/obj/create", `{"obj":{"project_id":"acme","object_id":"x","val":1}}`, 400, "entity/project"},
		{"read: unknown key", "POST", "/obj/read", `{"project_id":"acme/app","object_id":"cfg","digest":"latest","x":1}`, 422, "x"},
		{"read: wrong type", "POST", "/obj/read", `{"project_id":"acme/app","object_id":"cfg","digest":"latest","metadata_only":"yes"}`, 422, "metadata_only"},
		{"read: digest missing", "POST", "/obj/read", `{"project_id":"acme/app","object_id":"cfg"}`, 422, "digest"},
		{"read: unknown digest", "POST", "/obj/read", read(strings.Repeat("A", 43)), 404, "not found"},
		{"read: unknown version", "POST", "/obj/read", read("v9"), 404, "not found"},
		{"query: limit wrong type", "POST", "/objs/query", `{"project_id":"acme/app","limit":"ten"}`, 422, "limit"},
		{"query: negative offset", "POST", "/objs/query", `{"project_id":"acme/app","offset":-1}`, 400, "offset"},
		{"query: unknown key", "POST", "/objs/query", `{"project_id":"acme/app","filters":{}}`, 422, "filters"},
		{"delete: too many digests", "POST", "/obj/delete", map[string]any{"project_id": "acme/app", "object_id": "cfg", "digests": make([]string, 101)}, 400, "100"},
		{"delete: unknown object", "POST", "/obj/delete", map[string]any{"project_id": "acme/app", "object_id": "nope"}, 404, "not found"},
		{"tags: invalid tag", "PUT", "/objs/cfg/versions/" + d + "/tags", map[string]any{"project_id": "acme/app", "tags": []string{"two  spaces"}}, 400, "tag"},
		{"tags: unknown digest", "PUT", "/objs/cfg/versions/v7/tags", map[string]any{"project_id": "acme/app", "tags": []string{"ok"}}, 404, "not found"},
		{"tags: unknown key", "PUT", "/objs/cfg/versions/" + d + "/tags", map[string]any{"project_id": "acme/app", "tags": []string{}, "digest": d}, 422, "digest"},
		{"tags: wrong type", "POST", "/objs/cfg/versions/" + d + "/tags/remove", map[string]any{"project_id": "acme/app", "tags": "ok"}, 422, "tags"},
		{"alias: latest", "PUT", "/objs/cfg/aliases", map[string]any{"project_id": "acme/app", "digest": d, "aliases": []string{"latest"}}, 400, "alias"},
		{"alias: version-like", "PUT", "/objs/cfg/aliases", map[string]any{"project_id": "acme/app", "digest": d, "aliases": []string{"v3"}}, 400, "alias"},
		{"alias: slash", "PUT", "/objs/cfg/aliases", map[string]any{"project_id": "acme/app", "digest": d, "aliases": []string{"a/b"}}, 400, "alias"},
		{"alias: unknown digest", "PUT", "/objs/cfg/aliases", map[string]any{"project_id": "acme/app", "digest": strings.Repeat("B", 43), "aliases": []string{"prod"}}, 404, "not found"},
		{"alias: digest missing", "PUT", "/objs/cfg/aliases", map[string]any{"project_id": "acme/app", "aliases": []string{"prod"}}, 422, "digest"},
		{"tags list: no project", "GET", "/tags", nil, 422, "project_id"},
		{"aliases list: bad project", "GET", "/aliases?project_id=nope", nil, 400, "entity/project"},
		{"refs: wrong type", "POST", "/refs/read_batch", `{"refs":"weave:///acme/app/object/cfg:x"}`, 422, "refs"},
		{"refs: unknown key", "POST", "/refs/read_batch", `{"refs":[],"project_id":"acme/app"}`, 422, "project_id"},
		{"refs: not a ref", "POST", "/refs/read_batch", map[string]any{"refs": []string{"weave:///acme"}}, 400, "refs[0]"},
		{"refs: latest", "POST", "/refs/read_batch", map[string]any{"refs": []string{"weave:///acme/app/object/cfg:latest"}}, 400, "latest"},
		{"refs: table ref", "POST", "/refs/read_batch", map[string]any{"refs": []string{"weave:///acme/app/table/" + table.Digest}}, 400, "table"},
		{"refs: too many", "POST", "/refs/read_batch", map[string]any{"refs": manyRefs(1001)}, 400, "1000"},
		{"table: unknown key", "POST", "/table/create", `{"table":{"project_id":"acme/app","rows":[]},"x":1}`, 422, "x"},
		{"table: row not an object", "POST", "/table/create", `{"table":{"project_id":"acme/app","rows":[1]}}`, 422, "rows[0]"},
		{"table: rows missing", "POST", "/table/create", `{"table":{"project_id":"acme/app"}}`, 422, "table.rows"},
		{"table: bad sort path", "POST", "/table/query", map[string]any{"project_id": "acme/app", "digest": table.Digest, "sort_by": []map[string]string{{"field": "a..b", "direction": "asc"}}}, 400, "sort_by"},
		{"table stream: bad sort path", "POST", "/table/query_stream", map[string]any{"project_id": "acme/app", "digest": table.Digest, "sort_by": []map[string]string{{"field": ".a", "direction": "asc"}}}, 400, "sort_by"},
		{"table: digest missing", "POST", "/table/query", `{"project_id":"acme/app"}`, 422, "digest"},
		{"update: unknown base", "POST", "/table/update", map[string]any{"project_id": "acme/app", "base_digest": "nope", "updates": []any{}}, 404, "not found"},
		{"update: pop out of range", "POST", "/table/update", map[string]any{"project_id": "acme/app", "base_digest": table.Digest, "updates": []any{map[string]any{"pop": map[string]any{"index": 5}}}}, 400, "Index out of range"},
		{"update: row not an object", "POST", "/table/update", map[string]any{"project_id": "acme/app", "base_digest": table.Digest, "updates": []any{map[string]any{"append": map[string]any{"row": 5}}}}, 422, "updates[0].append.row"},
		{"update: two ops in one", "POST", "/table/update", map[string]any{"project_id": "acme/app", "base_digest": table.Digest, "updates": []any{map[string]any{"pop": map[string]any{"index": 0}, "append": map[string]any{"row": map[string]any{}}}}}, 400, "exactly one"},
		{"stats: unknown key", "POST", "/table/query_stats", `{"project_id":"acme/app","digest":"x","limit":1}`, 422, "limit"},
		{"stats batch: wrong type", "POST", "/table/query_stats_batch", `{"project_id":"acme/app","digests":"x"}`, 422, "digests"},
		{"from digests: missing", "POST", "/table/create_from_digests", `{"project_id":"acme/app"}`, 422, "row_digests"},
		{"threads: sort field", "POST", "/threads/stream_query", map[string]any{"project_id": "acme/app", "sort_by": []map[string]string{{"field": "first_turn_id", "direction": "asc"}}}, 400, "sort_by[0].field"},
		{"threads: direction", "POST", "/threads/stream_query", map[string]any{"project_id": "acme/app", "sort_by": []map[string]string{{"field": "turn_count", "direction": "up"}}}, 422, "direction"},
		{"threads: negative limit", "POST", "/threads/stream_query", `{"project_id":"acme/app","limit":-1}`, 400, "limit"},
		{"threads: bad datetime", "POST", "/threads/stream_query", `{"project_id":"acme/app","filter":{"after_datetime":"yesterday"}}`, 422, "filter.after_datetime"},
		{"threads: unknown key", "POST", "/threads/stream_query", `{"project_id":"acme/app","query":{}}`, 422, "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := e.send(tt.method, tt.path, tt.body)
			var body struct{ Reason string }
			if err := json.Unmarshal(out, &body); err != nil {
				t.Fatalf("answer is not JSON: %s", out)
			}
			if status != tt.status || !strings.Contains(body.Reason, tt.mention) {
				t.Errorf("%s %s = %d %q; want %d mentioning %q", tt.method, tt.path, status, body.Reason, tt.status, tt.mention)
			}
		})
	}
}

func manyRefs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("weave:///acme/app/object/o%d:%043d", i, i)
	}
	return out
}

// TestAccessCheckedBeforeStorage serves every endpoint over nil stores:
// a request that reached storage would panic. Callers of another entity
// get 403, viewers get 403 on writes, requests without a principal 401.
func TestAccessCheckedBeforeStorage(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	evil, viewer := principal("evil", auth.RoleAdmin), principal("acme", auth.RoleViewer)
	p := map[string]any{"project_id": "acme/app"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"project_id": "acme/app"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	obj := map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": "x", "val": 1}}
	table := map[string]any{"table": map[string]any{"project_id": "acme/app", "rows": []any{}}}
	tests := []struct {
		method, path string
		body         any
		write        bool
	}{
		{"POST", "/obj/create", obj, true},
		{"POST", "/obj/read", with("object_id", "x", "digest", "latest"), false},
		{"POST", "/obj/delete", with("object_id", "x"), true},
		{"POST", "/objs/query", p, false},
		{"PUT", "/objs/x/versions/latest/tags", with("tags", []string{"t"}), true},
		{"POST", "/objs/x/versions/latest/tags/remove", with("tags", []string{"t"}), true},
		{"PUT", "/objs/x/aliases", with("digest", "latest", "aliases", []string{"a"}), true},
		{"POST", "/objs/x/aliases/remove", with("aliases", []string{"a"}), true},
		{"GET", "/tags?project_id=acme/app", nil, false},
		{"GET", "/aliases?project_id=acme/app", nil, false},
		{"POST", "/table/create", table, true},
		{"POST", "/table/update", with("base_digest", "d", "updates", []any{}), true},
		{"POST", "/table/create_from_digests", with("row_digests", []string{}), true},
		{"POST", "/table/query", with("digest", "d"), false},
		{"POST", "/table/query_stream", with("digest", "d"), false},
		{"POST", "/table/query_stats", with("digest", "d"), false},
		{"POST", "/table/query_stats_batch", p, false},
		{"POST", "/threads/stream_query", p, false},
	}
	for _, tt := range tests {
		cases := map[string]struct {
			caller *auth.Principal
			status int
		}{"other entity": {&evil, 403}, "anonymous": {nil, 401}}
		if tt.write {
			cases["viewer writes"] = struct {
				caller *auth.Principal
				status int
			}{&viewer, 403}
		}
		for name, c := range cases {
			t.Run(tt.path+" "+name, func(t *testing.T) {
				if got := serveWithoutStore(t, logger, c.caller, tt.method, tt.path, tt.body); got != c.status {
					t.Errorf("%s %s as %s = %d; want %d", tt.method, tt.path, name, got, c.status)
				}
			})
		}
	}
	if got := serveWithoutStore(t, logger, nil, "POST", "/refs/read_batch", map[string]any{"refs": []string{}}); got != 401 {
		t.Errorf("anonymous /refs/read_batch = %d; want 401", got)
	}
}

func serveWithoutStore(t *testing.T, logger *slog.Logger, caller *auth.Principal, method, path string, body any) int {
	t.Helper()
	mux := http.NewServeMux()
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%s %s reached storage: %v", method, path, v)
					w.WriteHeader(599)
				}
			}()
			if caller != nil {
				r = r.WithContext(httpapi.WithPrincipal(r.Context(), *caller))
			}
			h.ServeHTTP(w, r)
		})
	}
	traceapi.NewObjectsAPI(nil, 1<<20, logger).Register(mux, wrap)
	traceapi.NewTablesAPI(nil, 1<<20, logger).Register(mux, wrap)
	traceapi.NewThreadsAPI(nil, 1<<20, logger).Register(mux, wrap)
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(method, path, bytes.NewReader(raw)))
	return rec.Code
}
