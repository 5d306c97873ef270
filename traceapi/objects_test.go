package traceapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
)

// apiEnv serves the objects, refs, tables and threads endpoints over a
// real DuckDB store, as whichever principal caller names.
type apiEnv struct {
	t      testing.TB
	store  *duckdb.Store
	mux    *http.ServeMux
	caller auth.Principal
}

func principal(entity string, role auth.Role) auth.Principal {
	return auth.Principal{KeyID: "key-" + entity + "-" + string(role), UserID: "user-" + entity + "-" + string(role),
		Entity: entity, Role: role}
}

func newAPIEnv(t testing.TB) *apiEnv {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	s, err := duckdb.Open(context.Background(), t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	e := &apiEnv{t: t, store: s, mux: http.NewServeMux(), caller: principal("acme", auth.RoleMember)}
	wrap := e.wrapAs
	const maxBody = 4 << 20
	traceapi.NewObjectsAPI(s, maxBody, logger).Register(e.mux, wrap)
	traceapi.NewTablesAPI(s, maxBody, logger).Register(e.mux, wrap)
	traceapi.NewThreadsAPI(s, maxBody, logger).Register(e.mux, wrap)
	return e
}

// wrapAs serves h as the env's current caller.
func (e *apiEnv) wrapAs(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), e.caller)))
	})
}

// send issues a request (body: string as is, anything else marshalled)
// and returns the status and the raw answer.
func (e *apiEnv) send(method, path string, body any) (int, []byte) {
	e.t.Helper()
	raw, ok := body.(string)
	if !ok && body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		raw = string(b)
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(raw)))
	return rec.Code, rec.Body.Bytes()
}

// ok sends a request that must answer 200 and decodes the answer into v.
func (e *apiEnv) ok(method, path string, body, v any) {
	e.t.Helper()
	status, out := e.send(method, path, body)
	if status != http.StatusOK {
		e.t.Fatalf("%s %s = %d: %s", method, path, status, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, out)
		}
	}
}

// publish creates an object version and returns its digest.
func (e *apiEnv) publish(project, id string, val any) string {
	e.t.Helper()
	var res struct{ Digest string }
	e.ok("POST", "/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": id, "val": val}}, &res)
	return res.Digest
}

// createdJSON is ObjCreateRes.
type createdJSON struct {
	Digest   string `json:"digest"`
	ObjectID string `json:"object_id"`
}

type objJSON struct {
	ObjectID        string          `json:"object_id"`
	CreatedAt       string          `json:"created_at"`
	DeletedAt       *string         `json:"deleted_at"`
	Digest          string          `json:"digest"`
	VersionIndex    int64           `json:"version_index"`
	IsLatest        int             `json:"is_latest"`
	Kind            string          `json:"kind"`
	BaseObjectClass *string         `json:"base_object_class"`
	Val             json.RawMessage `json:"val"`
	WBUserID        *string         `json:"wb_user_id"`
	SizeBytes       *int64          `json:"size_bytes"`
	Tags            []string        `json:"tags"`
	Aliases         []string        `json:"aliases"`
}

func (e *apiEnv) readObj(project, id, selector string, extra ...string) objJSON {
	e.t.Helper()
	body := map[string]any{"project_id": project, "object_id": id, "digest": selector}
	for _, k := range extra {
		body[k] = true
	}
	var res struct{ Obj objJSON }
	e.ok("POST", "/obj/read", body, &res)
	return res.Obj
}

// wireTime is how the reference prints datetimes: UTC, Z, microseconds
// only when non-zero.
var wireTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$`)

func TestObjectVersions(t *testing.T) {
	e := newAPIEnv(t)
	forged := map[string]any{"project_id": "acme/app", "object_id": "cfg", "val": map[string]any{"b": 1, "a": 2}, "wb_user_id": "someone-else"}
	var created createdJSON
	e.ok("POST", "/obj/create", map[string]any{"obj": forged}, &created)
	if created.ObjectID != "cfg" || len(created.Digest) != 43 {
		t.Fatalf("create answered %+v", created)
	}
	v0 := e.readObj("acme/app", "cfg", created.Digest)
	if v0.WBUserID == nil || *v0.WBUserID != e.caller.UserID {
		t.Errorf("wb_user_id = %v; want the caller %s, not the body's", v0.WBUserID, e.caller.UserID)
	}
	if !wireTime.MatchString(v0.CreatedAt) || v0.DeletedAt != nil || v0.Kind != "object" || v0.IsLatest != 1 {
		t.Errorf("v0 = %+v", v0)
	}
	d1 := e.publish("acme/app", "cfg", map[string]any{"a": 3})
	if again := e.publish("acme/app", "cfg", map[string]any{"b": 1, "a": 2}); again != created.Digest {
		t.Errorf("re-publishing v0 gave %s, want %s", again, created.Digest)
	}
	for sel, want := range map[string]string{"latest": created.Digest, "v1": d1, "v0": created.Digest, d1: d1} {
		if got := e.readObj("acme/app", "cfg", sel); got.Digest != want {
			t.Errorf("read %s = %s; want %s", sel, got.Digest, want)
		}
	}
	if got := e.readObj("acme/app", "cfg", "v1", "metadata_only"); string(got.Val) != "{}" || got.VersionIndex != 1 {
		t.Errorf("metadata_only read = %s v%d", got.Val, got.VersionIndex)
	}
	e.publish("acme/app", "add", map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]any{"type": "Op"}})
	assertObjQuery(t, e)
}

func assertObjQuery(t *testing.T, e *apiEnv) {
	t.Helper()
	pyDumps := map[string]string{
		`cfg{"a":2,"b":1}`: `{"a": 2, "b": 1}`,
		`cfg{"a":3}`:       `{"a": 3}`,
		`add{"_type":"CustomWeaveType","weave_type":{"type":"Op"}}`: `{"_type": "CustomWeaveType", "weave_type": {"type": "Op"}}`,
	}
	tests := []struct {
		name string
		body map[string]any
		want []string // object_id:v<index>
	}{
		{"all in order", nil, []string{"cfg:0", "cfg:1", "add:0"}},
		{"latest only", map[string]any{"filter": map[string]any{"latest_only": true}}, []string{"cfg:0", "add:0"}},
		{"ops", map[string]any{"filter": map[string]any{"is_op": true}}, []string{"add:0"}},
		{"by id, desc", map[string]any{"filter": map[string]any{"object_ids": []string{"cfg"}},
			"sort_by": []map[string]string{{"field": "created_at", "direction": "desc"}}}, []string{"cfg:1", "cfg:0"}},
		{"page", map[string]any{"limit": 1, "offset": 1}, []string{"cfg:1"}},
		{"explicit nulls are defaults", map[string]any{"filter": nil, "limit": nil, "sort_by": nil}, []string{"cfg:0", "cfg:1", "add:0"}},
	}
	for _, tt := range tests {
		body := map[string]any{"project_id": "acme/app", "include_storage_size": true}
		for k, v := range tt.body {
			body[k] = v
		}
		var res struct{ Objs []objJSON }
		e.ok("POST", "/objs/query", body, &res)
		var got []string
		for _, o := range res.Objs {
			got = append(got, fmt.Sprintf("%s:%d", o.ObjectID, o.VersionIndex))
			// size_bytes is the length of the stored Python-style text.
			if want := int64(len(pyDumps[o.ObjectID+string(o.Val)])); o.SizeBytes == nil || *o.SizeBytes != want {
				t.Errorf("%s: size_bytes %v for val %s; want %d", tt.name, o.SizeBytes, o.Val, want)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestObjectDelete(t *testing.T) {
	e := newAPIEnv(t)
	d0 := e.publish("acme/app", "cfg", 1)
	d1 := e.publish("acme/app", "cfg", 2)
	var del struct {
		NumDeleted      int                       `json:"num_deleted"`
		DeletedVersions []struct{ Digest string } `json:"deleted_versions"`
	}
	e.ok("POST", "/obj/delete", map[string]any{"project_id": "acme/app", "object_id": "cfg", "digests": []string{"latest"}}, &del)
	if del.NumDeleted != 1 || len(del.DeletedVersions) != 1 || del.DeletedVersions[0].Digest != d1 {
		t.Fatalf("delete answered %+v", del)
	}
	status, body := e.send("POST", "/obj/read", map[string]any{"project_id": "acme/app", "object_id": "cfg", "digest": d1})
	var gone map[string]any
	_ = json.Unmarshal(body, &gone)
	deletedAt, _ := gone["deleted_at"].(string)
	if status != http.StatusNotFound || !wireTime.MatchString(deletedAt) || !strings.Contains(gone["reason"].(string), "cfg:v1 was deleted") {
		t.Fatalf("read of a deleted version = %d %s; want 404 with deleted_at", status, body)
	}
	if got := e.readObj("acme/app", "cfg", "latest"); got.Digest != d0 {
		t.Errorf("latest after delete = %s; want v0 %s", got.Digest, d0)
	}
	status, body = e.send("POST", "/obj/delete", map[string]any{"project_id": "acme/app", "object_id": "cfg", "digests": []string{d1}})
	if status != http.StatusNotFound {
		t.Errorf("deleting a deleted version = %d %s; want 404", status, body)
	}
	e.ok("POST", "/obj/delete", map[string]any{"project_id": "acme/app", "object_id": "cfg", "digests": nil}, &del)
	if del.NumDeleted != 1 {
		t.Errorf("deleting the rest removed %d versions; want 1", del.NumDeleted)
	}
}

// TestTSClientObjectSamples replays the TypeScript SDK's recorded object
// requests and checks the answers the SDK reads.
func TestTSClientObjectSamples(t *testing.T) {
	e := newAPIEnv(t)
	for _, name := range []string{"04-obj-create-op", "07-obj-create-plain-object", "08-obj-create-weaveobject",
		"12-obj-create-dataset", "15-obj-create-evaluation"} {
		req := loadSample(t, name)
		var res createdJSON
		e.ok("POST", "/obj/create", req, &res)
		obj := req["obj"].(map[string]any)
		got := e.readObj("acme/demo", obj["object_id"].(string), res.Digest)
		if !jsonEqual(t, got.Val, obj["val"]) {
			t.Errorf("%s: read back %s", name, got.Val)
		}
		wantKind := map[bool]string{true: "op", false: "object"}[name == "04-obj-create-op"]
		if got.Kind != wantKind || res.ObjectID != obj["object_id"] {
			t.Errorf("%s: kind %s, object_id %s", name, got.Kind, res.ObjectID)
		}
	}
	// The SDK's read of the plain object: the digest it got back resolves.
	read := loadSample(t, "09-obj-read")
	read["digest"] = e.readObj("acme/demo", "demo-config", "latest").Digest
	var res struct{ Obj objJSON }
	e.ok("POST", "/obj/read", read, &res)
	if res.Obj.BaseObjectClass != nil || !jsonEqual(t, res.Obj.Val, map[string]any{"temperature": 0.2, "model": "fake-model", "tags": []any{"a", "b"}}) {
		t.Errorf("09 read = %+v", res.Obj)
	}
	if cls := e.readObj("acme/demo", "greeting-template", "latest").BaseObjectClass; cls == nil || *cls != "PromptTemplate" {
		t.Errorf("base_object_class of a WeaveObject = %v; want PromptTemplate", cls)
	}
}

// loadSample returns the request body of a recorded TypeScript SDK request.
func loadSample(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Request struct{ Body map[string]any }
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.Request.Body
}

func jsonEqual(t *testing.T, raw json.RawMessage, want any) bool {
	t.Helper()
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(w, &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
