package traceapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
)

// v2Store is what the v2 object API and the endpoints it shares objects
// with need of a backend.
type v2Store interface {
	storage.ObjectStore
	storage.TableStore
	storage.FileStore
}

// v2Backends open each real backend the v2 object tests run on.
var v2Backends = []struct {
	name string
	open func(t testing.TB) v2Store
}{
	{"duckdb", func(t testing.TB) v2Store {
		s, err := duckdb.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"clickhouse", func(t testing.TB) v2Store { return openClickHouse(t) }},
}

// v2Env serves the v2 object API next to the objects, tables and files
// endpoints over one store, as whichever principal caller names.
type v2Env struct {
	t      testing.TB
	mux    *http.ServeMux
	caller auth.Principal
}

// forEachBackend runs each case as a subtest on every backend, the cases
// of a backend sharing one store (each case uses a project of its own).
func forEachBackend(t *testing.T, cases map[string]func(t *testing.T, e *v2Env)) {
	for _, b := range v2Backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			for name, run := range cases {
				t.Run(name, func(t *testing.T) { run(t, newV2Env(t, s)) })
			}
		})
	}
}

func newV2Env(t testing.TB, s v2Store) *v2Env {
	const maxBody = 1 << 20
	logger := slog.New(slog.DiscardHandler)
	e := &v2Env{t: t, mux: http.NewServeMux(), caller: principal("acme", auth.RoleMember)}
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), e.caller)))
		})
	}
	traceapi.NewV2ObjectsAPI(s, s, s, maxBody, logger).Register(e.mux, wrap)
	traceapi.NewObjectsAPI(s, maxBody, logger).Register(e.mux, wrap)
	traceapi.NewTablesAPI(s, maxBody, logger).Register(e.mux, wrap)
	return e
}

// send issues a request (body: string as is, anything else marshalled)
// and returns the recorded answer.
func (e *v2Env) send(method, path string, body any) *httptest.ResponseRecorder {
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
	return rec
}

// ok sends a request that must answer 200 and decodes the answer into v.
func (e *v2Env) ok(method, path string, body, v any) {
	e.t.Helper()
	rec := e.send(method, path, body)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("%s %s = %d: %s", method, path, rec.Code, rec.Body)
	}
	if v != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, rec.Body)
		}
	}
}

// fails sends a request that must answer status, and returns its reason.
func (e *v2Env) fails(method, path string, body any, status int) string {
	e.t.Helper()
	rec := e.send(method, path, body)
	var answer struct{ Reason string }
	if rec.Code != status || json.Unmarshal(rec.Body.Bytes(), &answer) != nil || answer.Reason == "" {
		e.t.Fatalf("%s %s = %d %s; want %d with a reason", method, path, rec.Code, rec.Body, status)
	}
	return answer.Reason
}

// list reads a JSON Lines list into one map per line.
func (e *v2Env) list(path string) []map[string]any {
	e.t.Helper()
	rec := e.send("GET", path, nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/jsonl" {
		e.t.Fatalf("GET %s = %d (%s): %s", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			e.t.Fatalf("GET %s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, line)
	}
	return out
}

// versions lists path and returns "object_id:v<index>" of each line.
func (e *v2Env) versions(path string) []string {
	e.t.Helper()
	var out []string
	for _, line := range e.list(path) {
		out = append(out, line["object_id"].(string)+":v"+jsonNumber(line["version_index"]))
	}
	return out
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// v2Created is the answer of every create.
type v2Created struct {
	Digest        string `json:"digest"`
	ObjectID      string `json:"object_id"`
	VersionIndex  int64  `json:"version_index"`
	Scorer        string `json:"scorer"`
	EvaluationRef string `json:"evaluation_ref"`
	ModelRef      string `json:"model_ref"`
}

func (e *v2Env) create(project, kind string, body any) v2Created {
	e.t.Helper()
	var c v2Created
	e.ok("POST", "/v2/"+project+"/"+kind, body, &c)
	return c
}

// readObj reads a version through /obj/read.
func (e *v2Env) readObj(project, id, digest string) objJSON {
	e.t.Helper()
	var res struct{ Obj objJSON }
	e.ok("POST", "/obj/read", map[string]any{"project_id": project, "object_id": id, "digest": digest}, &res)
	return res.Obj
}
