package traceapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
)

// Two annotators of entity acme.
var (
	alice = auth.Principal{KeyID: "k-alice", UserID: "alice", Entity: "acme", Role: auth.RoleMember}
	bob   = auth.Principal{KeyID: "k-bob", UserID: "bob", Entity: "acme", Role: auth.RoleMember}
)

// queueEnv serves the annotation queue endpoints over a real DuckDB
// store, as whichever caller a request names.
type queueEnv struct {
	t     *testing.T
	store *duckdb.Store
	mux   *http.ServeMux
}

func newQueueEnv(t *testing.T) *queueEnv {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	s, err := duckdb.Open(context.Background(), t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	e := &queueEnv{t: t, store: s, mux: http.NewServeMux()}
	// The caller is the principal named by the test's X-Caller header.
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := alice
			if r.Header.Get("X-Caller") == bob.UserID {
				p = bob
			}
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), p)))
		})
	}
	traceapi.NewAnnotationQueuesAPI(s, testMaxBody, logger).Register(e.mux, wrap)
	return e
}

// send makes a request as caller; body is marshalled unless it is a
// string or nil.
func (e *queueEnv) send(caller auth.Principal, method, path string, body any) *httptest.ResponseRecorder {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("X-Caller", caller.UserID)
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec
}

// ok sends and decodes a 200 JSON answer.
func (e *queueEnv) ok(caller auth.Principal, method, path string, body any) map[string]any {
	e.t.Helper()
	rec := e.send(caller, method, path, body)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		e.t.Fatalf("%s %s: %v in %s", method, path, err, rec.Body)
	}
	return out
}

func (e *queueEnv) createQueue(name string) string {
	e.t.Helper()
	out := e.ok(alice, http.MethodPost, "/annotation_queues", map[string]any{"project_id": "acme/app", "name": name,
		"scorer_refs": []string{"weave:///acme/app/object/scorer:v1"}})
	return out["id"].(string)
}

// writeCalls stores finished calls of op "op-<id>" in trace "t-<id>",
// started a minute apart.
func (e *queueEnv) writeCalls(project string, ids ...string) {
	e.t.Helper()
	var ops []storage.CallOp
	for i, id := range ids {
		startAt := threadsEpoch().Add(time.Duration(i) * time.Minute)
		endAt := startAt.Add(time.Second)
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
			ProjectID: project, ID: id, TraceID: "t-" + id, OpName: "op-" + id, StartedAt: startAt, EndedAt: &endAt,
			Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(`{}`)}}})
	}
	if _, err := e.store.WriteCallOps(context.Background(), ops); err != nil {
		e.t.Fatal(err)
	}
}

func (e *queueEnv) items(queue string, body map[string]any) []map[string]any {
	e.t.Helper()
	body["project_id"] = "acme/app"
	out := e.ok(alice, http.MethodPost, "/annotation_queues/"+queue+"/items/query", body)
	var items []map[string]any
	for _, it := range out["items"].([]any) {
		items = append(items, it.(map[string]any))
	}
	return items
}

func TestAnnotationQueueLifecycle(t *testing.T) {
	e := newQueueEnv(t)
	out := e.ok(alice, http.MethodPost, "/annotation_queues", map[string]any{"project_id": "acme/app",
		"name": "Error Review", "description": "calls that raised", "scorer_refs": []string{"weave:///acme/app/object/s:1"},
		"wb_user_id": "mallory"})
	id := out["id"].(string)
	other := e.createQueue("Quality")

	q := e.ok(bob, http.MethodGet, "/annotation_queues/"+id+"?project_id=acme/app", nil)["queue"].(map[string]any)
	if q["id"] != id || q["name"] != "Error Review" || q["description"] != "calls that raised" || q["project_id"] != "acme/app" ||
		q["created_by"] != "alice" || q["deleted_at"] != nil || q["created_at"] != q["updated_at"] {
		t.Fatalf("read = %v; want the queue as created, by the caller alice (not the body's wb_user_id)", q)
	}
	if refs := q["scorer_refs"].([]any); len(refs) != 1 || refs[0] != "weave:///acme/app/object/s:1" {
		t.Fatalf("scorer_refs = %v", refs)
	}

	upd := e.ok(bob, http.MethodPut, "/annotation_queues/"+id, map[string]any{"project_id": "acme/app", "name": "Errors"})["queue"].(map[string]any)
	if upd["name"] != "Errors" || upd["description"] != "calls that raised" || upd["created_by"] != "alice" {
		t.Fatalf("partial update = %v; want only the name changed", upd)
	}

	// The query streams JSON lines, newest first, filtered by name.
	rec := e.send(alice, http.MethodPost, "/annotation_queues/query", map[string]any{"project_id": "acme/app"})
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/jsonl" {
		t.Fatalf("query = %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if got := lineIDs(t, rec.Body.Bytes()); !slices.Equal(got, []string{other, id}) {
		t.Fatalf("queue lines = %v; want %v (newest first)", got, []string{other, id})
	}
	rec = e.send(alice, http.MethodPost, "/annotation_queues/query", map[string]any{"project_id": "acme/app", "name": "ERR"})
	if got := lineIDs(t, rec.Body.Bytes()); !slices.Equal(got, []string{id}) {
		t.Fatalf("queues named like ERR = %v; want [%s]", got, id)
	}

	del := e.ok(alice, http.MethodDelete, "/annotation_queues/"+id+"?project_id=acme/app", nil)["queue"].(map[string]any)
	if del["deleted_at"] == nil || del["deleted_at"] != del["updated_at"] {
		t.Fatalf("delete = %v; want deleted_at set, and updated_at with it", del)
	}
	for _, path := range []string{"/annotation_queues/" + id + "?project_id=acme/app"} {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			if rec := e.send(alice, method, path, nil); rec.Code != http.StatusNotFound {
				t.Errorf("%s deleted queue = %d %s; want 404", method, rec.Code, rec.Body)
			}
		}
	}
	rec = e.send(alice, http.MethodPost, "/annotation_queues/query", map[string]any{"project_id": "acme/app"})
	if got := lineIDs(t, rec.Body.Bytes()); !slices.Equal(got, []string{other}) {
		t.Fatalf("queues after delete = %v; want [%s]", got, other)
	}
}

// lineIDs reads the id of every JSON line of a stream.
func lineIDs(t *testing.T, body []byte) []string {
	t.Helper()
	ids := []string{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var row struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		ids = append(ids, row.ID)
	}
	return ids
}

func TestAnnotationQueueItemsAndProgressPerUser(t *testing.T) {
	e := newQueueEnv(t)
	e.writeCalls("acme/app", "c1", "c2", "c3")
	e.writeCalls("acme/other", "x1")
	queue := e.createQueue("Review")
	add := e.ok(alice, http.MethodPost, "/annotation_queues/"+queue+"/items", map[string]any{"project_id": "acme/app",
		"call_ids": []string{"c1", "c2", "x1"}, "display_fields": []string{"inputs", "output"}, "wb_user_id": "mallory"})
	if add["added_count"] != 2.0 || add["duplicates"] != 0.0 {
		t.Fatalf("add = %v; want 2 added: x1 is another project's call", add)
	}
	add = e.ok(bob, http.MethodPost, "/annotation_queues/"+queue+"/items", map[string]any{"project_id": "acme/app",
		"call_ids": []string{"c2", "c3"}, "display_fields": []string{}})
	if add["added_count"] != 1.0 || add["duplicates"] != 1.0 {
		t.Fatalf("second add = %v; want 1 added, 1 duplicate", add)
	}

	items := e.items(queue, map[string]any{"include_position": true, "sort_by": []map[string]string{{"field": "call_started_at", "direction": "desc"}}})
	if len(items) != 3 {
		t.Fatalf("items = %v", items)
	}
	c1 := items[2]
	want := map[string]any{"call_id": "c1", "queue_id": queue, "project_id": "acme/app", "call_op_name": "op-c1",
		"call_trace_id": "t-c1", "call_started_at": "2025-03-04T10:00:00Z", "call_ended_at": "2025-03-04T10:00:01Z",
		"added_by": "alice", "created_by": "alice", "annotation_state": "unstarted", "annotator_user_id": "",
		"position_in_queue": 3.0, "deleted_at": nil}
	for k, v := range want {
		if c1[k] != v {
			t.Errorf("c1 item %s = %v, want %v", k, c1[k], v)
		}
	}
	if items[0]["call_id"] != "c3" || items[0]["added_by"] != "bob" || items[0]["position_in_queue"] != 1.0 {
		t.Errorf("first item = %v; want c3, added by bob, position 1", items[0])
	}
	if got := e.items(queue, map[string]any{})[0]; got["position_in_queue"] != nil {
		t.Errorf("position without include_position = %v; want null", got["position_in_queue"])
	}

	progress := func(caller auth.Principal, item, state string) *httptest.ResponseRecorder {
		return e.send(caller, http.MethodPost, "/annotation_queues/"+queue+"/items/"+item+"/progress",
			map[string]any{"project_id": "acme/app", "annotation_state": state, "wb_user_id": "mallory"})
	}
	item := c1["id"].(string)
	rec := progress(alice, item, "completed")
	var res struct{ Item map[string]any }
	if err := json.Unmarshal(rec.Body.Bytes(), &res); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("alice completes = %d %s", rec.Code, rec.Body)
	}
	if res.Item["id"] != item || res.Item["annotation_state"] != "completed" || res.Item["annotator_user_id"] != "alice" {
		t.Fatalf("alice completes: item %v; want completed by alice (the key's user, not the body's)", res.Item)
	}
	if rec := progress(alice, item, "completed"); rec.Code != http.StatusOK {
		t.Fatalf("alice completes again = %d %s; want the retry to succeed", rec.Code, rec.Body)
	}
	rec = progress(alice, item, "skipped")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "annotation_state") {
		t.Fatalf("alice completed -> skipped = %d %s; want 400 naming annotation_state", rec.Code, rec.Body)
	}
	// Bob's progress is his own: he may start the item alice completed.
	if rec := progress(bob, item, "in_progress"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"annotator_user_id":"bob"`) {
		t.Fatalf("bob starts = %d %s; want in_progress by bob", rec.Code, rec.Body)
	}
	if rec := progress(bob, items[1]["id"].(string), "skipped"); rec.Code != http.StatusOK {
		t.Fatalf("bob skips c2 = %d %s", rec.Code, rec.Body)
	}

	states := e.items(queue, map[string]any{"filter": map[string]any{"annotation_states": []string{"unstarted"}}})
	if len(states) != 1 || states[0]["call_id"] != "c3" {
		t.Errorf("unstarted items = %v; want only c3", states)
	}
	stats := e.ok(bob, http.MethodPost, "/annotation_queues/stats", map[string]any{"project_id": "acme/app",
		"queue_ids": []string{queue, "no-such-queue"}})
	wantStats := `[{"completed_items":2,"queue_id":"` + queue + `","total_items":3},{"completed_items":0,"queue_id":"no-such-queue","total_items":0}]`
	if got, _ := json.Marshal(stats["stats"]); string(got) != wantStats {
		t.Errorf("stats = %s, want %s (c1 completed by alice, c2 skipped by bob)", got, wantStats)
	}
}

func TestAnnotationQueueErrors(t *testing.T) {
	e := newQueueEnv(t)
	e.writeCalls("acme/app", "c1")
	queue := e.createQueue("Review")
	e.ok(alice, http.MethodPost, "/annotation_queues/"+queue+"/items", map[string]any{"project_id": "acme/app",
		"call_ids": []string{"c1"}, "display_fields": []string{}})
	qpath := "/annotation_queues/" + queue
	tooMany := make([]string, traceapi.MaxQueueCallsPerAdd+1)
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		status       int
		reason       string // a part of the answer's reason
	}{
		{"limit negative", http.MethodPost, "/annotation_queues/query", `{"project_id":"acme/app","limit":-1}`, 400, "limit"},
		{"queue sort field", http.MethodPost, "/annotation_queues/query",
			`{"project_id":"acme/app","sort_by":[{"field":"description","direction":"asc"}]}`, 400, "sort_by[0].field"},
		{"item sort field", http.MethodPost, qpath + "/items/query",
			`{"project_id":"acme/app","sort_by":[{"field":"call_id","direction":"asc"}]}`, 400, "sort_by[0].field"},
		{"offset negative", http.MethodPost, qpath + "/items/query", `{"project_id":"acme/app","offset":-2}`, 400, "offset"},
		{"state not settable", http.MethodPost, qpath + "/items/x/progress",
			`{"project_id":"acme/app","annotation_state":"unstarted"}`, 400, "annotation_state"},
		{"name too long", http.MethodPost, "/annotation_queues",
			map[string]any{"project_id": "acme/app", "name": strings.Repeat("n", traceapi.MaxQueueNameBytes+1), "scorer_refs": []string{}},
			400, "name"},
		{"too many display fields", http.MethodPost, qpath + "/items",
			map[string]any{"project_id": "acme/app", "call_ids": []string{"c1"}, "display_fields": make([]string, traceapi.MaxQueueListLen+1)},
			400, "display_fields"},
		{"too many calls", http.MethodPost, qpath + "/items",
			map[string]any{"project_id": "acme/app", "call_ids": tooMany, "display_fields": []string{}}, 413, "call_ids"},
		{"scorer_refs missing", http.MethodPost, "/annotation_queues", `{"project_id":"acme/app","name":"x"}`, 422, "scorer_refs"},
		{"unknown key", http.MethodPost, qpath + "/items/query", `{"project_id":"acme/app","queue_id":"q"}`, 422, "queue_id"},
		{"unknown state filter", http.MethodPost, qpath + "/items/query",
			`{"project_id":"acme/app","filter":{"annotation_states":["done"]}}`, 422, "filter.annotation_states[0]"},
		{"project missing on read", http.MethodGet, qpath, nil, 422, "project_id"},
		{"another entity", http.MethodGet, qpath + "?project_id=other/app", nil, 403, "other"},
		{"read unknown queue", http.MethodGet, "/annotation_queues/nope?project_id=acme/app", nil, 404, "nope"},
		{"read from another project", http.MethodGet, qpath + "?project_id=acme/else", nil, 404, queue},
		{"update unknown queue", http.MethodPut, "/annotation_queues/nope", `{"project_id":"acme/app","name":"n"}`, 404, "nope"},
		{"delete unknown queue", http.MethodDelete, "/annotation_queues/nope?project_id=acme/app", nil, 404, "nope"},
		{"add to unknown queue", http.MethodPost, "/annotation_queues/nope/items",
			`{"project_id":"acme/app","call_ids":["c1"],"display_fields":[]}`, 404, "nope"},
		{"items of unknown queue", http.MethodPost, "/annotation_queues/nope/items/query", `{"project_id":"acme/app"}`, 404, "nope"},
		{"progress on unknown item", http.MethodPost, qpath + "/items/nope/progress",
			`{"project_id":"acme/app","annotation_state":"completed"}`, 404, "nope"},
		{"progress in unknown queue", http.MethodPost, "/annotation_queues/nope/items/x/progress",
			`{"project_id":"acme/app","annotation_state":"completed"}`, 404, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.send(alice, tc.method, tc.path, tc.body)
			var out struct{ Reason string }
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != tc.status || !strings.Contains(out.Reason, tc.reason) {
				t.Fatalf("%s %s = %d %s; want %d naming %q", tc.method, tc.path, rec.Code, rec.Body, tc.status, tc.reason)
			}
		})
	}
}
