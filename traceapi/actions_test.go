package traceapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/traceapi"
)

// fakeJudge is a Completer answering with content, or failing with err.
type fakeJudge struct {
	mu       sync.Mutex
	requests []map[string]any
	content  string
	err      error
}

func (f *fakeJudge) Complete(_ context.Context, p auth.Principal, projectID string, request json.RawMessage) (json.RawMessage, error) {
	var req map[string]any
	if err := json.Unmarshal(request, &req); err != nil {
		return nil, err
	}
	req["_project"], req["_user"] = projectID, p.UserID
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": f.content}}}})
}

// statusErr is a completion failure with a status, as the gateway's are.
type statusErr struct{ status int }

func (e statusErr) Error() string   { return fmt.Sprintf("answered %d", e.status) }
func (e statusErr) StatusCode() int { return e.status }

func newActionsEnv(t *testing.T, llm traceapi.Completer) *storeEnv {
	e := newStoreEnv(t)
	fb, err := traceapi.NewFeedbackAPI(e.store, testMaxBody, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), e.caller)))
		})
	}
	traceapi.NewActionsAPI(e.store, fb, llm, testMaxBody, slog.New(slog.DiscardHandler)).Register(e.mux, wrap)
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var ops []storage.CallOp
	for i, out := range []string{`"The answer is 42"`, `{"text":"I refuse"}`} {
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{
			ProjectID: "acme/p", ID: fmt.Sprintf("c%d", i+1), TraceID: "t1", OpName: "weave:///acme/p/op/answer:d1",
			StartedAt: at, EndedAt: &at, Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{"question":"meaning?"}`),
			Output: json.RawMessage(out), Summary: json.RawMessage(`{}`)}}})
	}
	if _, err := e.store.WriteCallOps(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	return e
}

// putAction stores an ActionSpec and returns its ref.
func putAction(t *testing.T, e *storeEnv, name, config string) string {
	t.Helper()
	res, err := e.store.CreateObject(context.Background(), storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
		ProjectID: "acme/p", ObjectID: name, Val: json.RawMessage(`{"_type":"ActionSpec","name":"` + name + `","config":` + config + `}`)}})
	if err != nil {
		t.Fatal(err)
	}
	return "weave:///acme/p/object/" + name + ":" + res.Digest
}

func actionFeedback(t *testing.T, e *storeEnv) map[string]map[string]any {
	t.Helper()
	out := e.expectStatus(t, "/feedback/query", `{"project_id":"acme/p"}`, http.StatusOK)
	byCall := map[string]map[string]any{}
	for _, r := range out["result"].([]any) {
		row := r.(map[string]any)
		byCall[row["weave_ref"].(string)] = row
	}
	return byCall
}

func TestActionsContainsWords(t *testing.T) {
	e := newActionsEnv(t, nil)
	ref := putAction(t, e, "mentions-42", `{"action_type":"contains_words","target_words":["42","forty-two"]}`)
	e.expectStatus(t, "/actions/execute_batch", map[string]any{"project_id": "acme/p", "action_ref": ref,
		"call_ids": []string{"c1", "c2", "missing"}}, http.StatusOK)
	rows := actionFeedback(t, e)
	if len(rows) != 2 {
		t.Fatalf("feedback rows %v, want one per existing call", rows)
	}
	for call, want := range map[string]bool{"c1": true, "c2": false} {
		row := rows["weave:///acme/p/call/"+call]
		if row["feedback_type"] != "wandb.runnable.mentions-42" || row["runnable_ref"] != ref || row["wb_user_id"] != "user-1" ||
			row["payload"].(map[string]any)["output"] != want {
			t.Errorf("%s: feedback %v, want output %v", call, row, want)
		}
	}
}

func TestActionsLLMJudge(t *testing.T) {
	judge := &fakeJudge{content: `{"response":true}`}
	e := newActionsEnv(t, judge)
	ref := putAction(t, e, "is-helpful", `{"action_type":"llm_judge","model":"gpt-4o-mini","prompt":"Is the answer helpful?","response_schema":{"type":"boolean"}}`)
	e.expectStatus(t, "/actions/execute_batch", map[string]any{"project_id": "acme/p", "action_ref": ref, "call_ids": []string{"c1"}}, http.StatusOK)
	if len(judge.requests) != 1 {
		t.Fatalf("%d judge requests, want 1", len(judge.requests))
	}
	req := judge.requests[0]
	msgs := req["messages"].([]any)
	user := msgs[1].(map[string]any)["content"].(string)
	schema := req["response_format"].(map[string]any)["json_schema"].(map[string]any)["schema"].(map[string]any)
	if req["model"] != "gpt-4o-mini" || req["_project"] != "acme/p" || req["_user"] != "user-1" ||
		msgs[0].(map[string]any)["content"] != "Is the answer helpful?" ||
		!strings.Contains(user, `"inputs":{"question":"meaning?"}`) || !strings.Contains(user, `"output":"The answer is 42"`) ||
		schema["type"] != "object" || schema["properties"].(map[string]any)["response"].(map[string]any)["type"] != "boolean" {
		t.Errorf("judge request %v", req)
	}
	row := actionFeedback(t, e)["weave:///acme/p/call/c1"]
	if row["feedback_type"] != "wandb.runnable.is-helpful" || row["runnable_ref"] != ref || row["payload"].(map[string]any)["output"] != true {
		t.Errorf("feedback %v, want the unwrapped verdict", row)
	}

	// An object schema is sent as it is, and the answer kept whole.
	judge.content = `{"score":0.8,"reason":"clear"}`
	ref = putAction(t, e, "scored", `{"action_type":"llm_judge","model":"gpt-4o","prompt":"Score it.","response_schema":{"type":"object","properties":{"score":{"type":"number"}}}}`)
	e.expectStatus(t, "/actions/execute_batch", map[string]any{"project_id": "acme/p", "action_ref": ref, "call_ids": []string{"c2"}}, http.StatusOK)
	row = actionFeedback(t, e)["weave:///acme/p/call/c2"]
	if out := row["payload"].(map[string]any)["output"].(map[string]any); out["score"] != 0.8 || out["reason"] != "clear" {
		t.Errorf("feedback %v", row)
	}
}

func TestActionsRejects(t *testing.T) {
	judge := &fakeJudge{content: "not json"}
	e := newActionsEnv(t, judge)
	judgeRef := putAction(t, e, "judge", `{"action_type":"llm_judge","model":"gpt-4o","prompt":"p","response_schema":{"type":"boolean"}}`)
	unknownRef := putAction(t, e, "rerank", `{"action_type":"rerank","model":"x"}`)
	noConfigRef := putAction(t, e, "plain", `1`)
	many := make([]string, traceapi.MaxActionBatch+1)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		reason string
	}{
		{"unknown action kind", map[string]any{"action_ref": unknownRef}, 400, `config.action_type \"rerank\"`},
		{"not an action", map[string]any{"action_ref": noConfigRef}, 400, "not an ActionSpec"},
		{"too many calls", map[string]any{"action_ref": judgeRef, "call_ids": many}, 400, "call_ids"},
		{"not a ref", map[string]any{"action_ref": "judge"}, 400, "action_ref"},
		{"another project's action", map[string]any{"action_ref": "weave:///acme/q/object/judge:abc"}, 400, "points into project"},
		{"missing action", map[string]any{"action_ref": "weave:///acme/p/object/nothing:abc"}, 404, ""},
		{"judge answers no JSON", map[string]any{"action_ref": judgeRef}, 502, ""},
		{"other team", map[string]any{"project_id": "rival/p", "action_ref": "weave:///rival/p/object/judge:abc"}, 403, ""},
		{"unknown field", map[string]any{"action_ref": judgeRef, "limit": 1}, 422, "unknown field"},
	} {
		body := map[string]any{"project_id": "acme/p", "call_ids": []string{"c1"}}
		for k, v := range tc.body {
			body[k] = v
		}
		code, raw := e.postRaw(t, "/actions/execute_batch", mustJSON(t, body))
		if code != tc.status || !strings.Contains(string(raw), tc.reason) {
			t.Errorf("%s: status %d (%s), want %d naming %q", tc.name, code, raw, tc.status, tc.reason)
		}
	}
	// A judge model the gateway refuses is the request's fault; nothing
	// is stored for a failed batch.
	judge.err = statusErr{status: http.StatusNotFound}
	code, raw := e.postRaw(t, "/actions/execute_batch", mustJSON(t, map[string]any{"project_id": "acme/p", "action_ref": judgeRef, "call_ids": []string{"c1"}}))
	if code != http.StatusBadRequest || !strings.Contains(string(raw), "gpt-4o") {
		t.Errorf("refused model: status %d (%s), want 400 naming the model", code, raw)
	}
	if rows := actionFeedback(t, e); len(rows) != 0 {
		t.Errorf("failed batches stored feedback: %v", rows)
	}
	// Without a gateway, LLM judges cannot run.
	bare := newActionsEnv(t, nil)
	ref := putAction(t, bare, "judge", `{"action_type":"llm_judge","model":"gpt-4o","prompt":"p","response_schema":{"type":"boolean"}}`)
	code, raw = bare.postRaw(t, "/actions/execute_batch", mustJSON(t, map[string]any{"project_id": "acme/p", "action_ref": ref, "call_ids": []string{"c1"}}))
	if code != http.StatusBadRequest || !strings.Contains(string(raw), "inference gateway") {
		t.Errorf("no gateway: status %d (%s)", code, raw)
	}
}
