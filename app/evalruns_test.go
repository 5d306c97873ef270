package app_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestEvaluationRunThroughThePipeline records an evaluation through the
// v2 evaluation endpoints of a whole server: the writes go through the
// write-ahead log and the pipeline, and every read, the calls API's too,
// sees each write as soon as it was acknowledged.
func TestEvaluationRunThroughThePipeline(t *testing.T) {
	e := newEnv(t)
	const base = "/v2/acme/evals/"
	call := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		status, _, out := e.do(method, base+path, e.member, body)
		if status != want {
			t.Fatalf("%s %s = %d: %s; want %d", method, path, status, out, want)
		}
		var res map[string]any
		_ = json.Unmarshal(out, &res)
		return res
	}
	run := call("POST", "evaluation_runs", map[string]any{"evaluation": "weave:///acme/evals/object/qa:1",
		"model": "weave:///acme/evals/object/bot:2"}, http.StatusOK)["evaluation_run_id"].(string)
	pred := call("POST", "predictions", map[string]any{"model": "weave:///acme/evals/object/bot:2",
		"inputs": map[string]any{"q": "hi"}, "output": "hello", "evaluation_run_id": run}, http.StatusOK)["prediction_id"].(string)
	call("POST", "scores", map[string]any{"prediction_id": pred, "scorer": "weave:///acme/evals/object/polite:3",
		"value": 1, "evaluation_run_id": run}, http.StatusOK)
	call("POST", "predictions/"+pred+"/finish", nil, http.StatusOK)
	call("POST", "evaluation_runs/"+run+"/finish", map[string]any{"summary": map[string]any{"rows": 1}}, http.StatusOK)

	got := call("GET", "evaluation_runs/"+run, nil, http.StatusOK)
	if got["status"] != "completed" || got["finished_at"] == nil {
		t.Fatalf("run reads %v; want it completed", got)
	}
	calls := byOp(e.stream(map[string]any{"project_id": "acme/evals", "filter": map[string]any{"trace_ids": []string{run}}}))
	root, row := calls["Evaluation.evaluate"], calls["Evaluation.predict_and_score"]
	if root.ID != run || row.ParentID == nil || *row.ParentID != run || calls["bot.predict"].ParentID == nil ||
		*calls["bot.predict"].ParentID != row.ID || calls["polite.score"].ID == "" || calls["Evaluation.summarize"].ID == "" {
		t.Fatalf("the run's trace by op: %+v; want run > row > prediction and score, and summarize", calls)
	}
	if string(root.Output) != `{"polite":{"mean":1.0}}` {
		t.Errorf("run output %s; want the scorer's mean as Python writes a float", root.Output)
	}
	if status, _, _ := e.do("GET", base+"evaluation_runs/"+run, e.evil, nil); status != http.StatusForbidden {
		t.Errorf("another entity's key read the run: %d", status)
	}
}
