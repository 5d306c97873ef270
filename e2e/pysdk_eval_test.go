package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// pyEval is what evaluate sent: the root call and the per-row calls.
type pyEval struct {
	root       pyCall
	rows       []pyCall // Evaluation.predict_and_score, one per dataset row
	scorerRef  string
	evalObjRef string
}

// evaluate runs an evaluation as Evaluation.evaluate does: the objects
// and ops it needs saved, the root call started eagerly, the finished
// calls of every row (children before parents) and the summary sent as
// completed calls, a score feedback per row, then the root's end.
func (s *pySDK) evaluate(datasetRef string, rowDigests []string, rows []map[string]any) pyEval {
	model := s.publishOp("fake_model", "def fake_model(question: str) -> str:\n    return 'Paris'\n")
	scorer := s.publishOp("exact_match", "def exact_match(expected: str, output: str) -> bool:\n    return expected == output\n")
	ops := map[string]string{}
	for _, name := range []string{"Evaluation.evaluate", "Evaluation.predict_and_score", "Evaluation.summarize"} {
		ops[name] = s.publishOp(name, "def "+name[len("Evaluation."):]+"(self, *args):\n    ...\n")
	}
	evalVal := pyObject("_type", "Evaluation", "name", "qa-eval", "description", nil, "dataset", datasetRef,
		"scorers", []string{scorer}, "preprocess_model_input", nil, "trials", 1, "evaluation_name", nil,
		"evaluate", ops["Evaluation.evaluate"], "predict_and_score", ops["Evaluation.predict_and_score"],
		"summarize", ops["Evaluation.summarize"], "_class_name", "Evaluation", "_bases", []string{"Object", "BaseModel"})
	var obj struct{ Digest string }
	s.send(http.MethodPost, "/traces/obj/create", pyObjCreate(s.project, "qa-eval", evalVal), &obj)
	ev := pyEval{scorerRef: scorer, evalObjRef: fmt.Sprintf("weave:///%s/object/qa-eval:%s", s.project, obj.Digest)}
	ev.root = pyCall{id: pyID(), traceID: pyID(), opRef: ops["Evaluation.evaluate"],
		inputs: map[string]any{"self": ev.evalObjRef, "model": model}, end: time.Second,
		output: map[string]any{"exact_match": map[string]any{"true_count": 1, "true_fraction": 0.5}}}
	s.send(http.MethodPost, "/traces/v2/"+s.project+"/call/start", map[string]any{"start": ev.root.startFields(s.project)}, nil)

	var batch, feedback []any
	for i, row := range rows {
		pas, calls, fb := s.scoredRow(ev, ops["Evaluation.predict_and_score"], model, datasetRef+"/attr/rows/id/"+rowDigests[i], row, i)
		ev.rows = append(ev.rows, pas)
		batch, feedback = append(batch, calls...), append(feedback, fb)
	}
	summary := pyCall{id: pyID(), traceID: ev.root.traceID, parentID: ev.root.id, opRef: ops["Evaluation.summarize"],
		inputs: map[string]any{"self": ev.evalObjRef}, output: ev.root.output, start: 900 * time.Millisecond, end: 950 * time.Millisecond}
	batch = append(batch, summary.complete(s.project))
	s.send(http.MethodPost, "/traces/v2/"+s.project+"/calls/complete", map[string]any{"batch": batch}, nil)
	s.send(http.MethodPost, "/traces/feedback/batch/create", map[string]any{"batch": feedback}, nil)
	s.send(http.MethodPost, "/traces/v2/"+s.project+"/call/end", map[string]any{"end": ev.root.endFields(s.project)}, nil)
	return ev
}

// scoredRow is one row of the evaluation: the model's and the scorer's
// calls, then their predict_and_score parent, and the score's feedback.
func (s *pySDK) scoredRow(ev pyEval, pasOp, model, rowRef string, row map[string]any, i int) (pyCall, []any, any) {
	at := time.Duration(i+1) * 100 * time.Millisecond
	pas := pyCall{id: pyID(), traceID: ev.root.traceID, parentID: ev.root.id, opRef: pasOp,
		inputs: map[string]any{"self": ev.evalObjRef, "model": model, "example": rowRef}, start: at, end: at + 50*time.Millisecond}
	correct := row["expected"] == "Paris"
	predict := pyCall{id: pyID(), traceID: ev.root.traceID, parentID: pas.id, opRef: model,
		inputs: map[string]any{"question": row["question"]}, output: "Paris", start: at + time.Millisecond, end: at + 10*time.Millisecond}
	score := pyCall{id: pyID(), traceID: ev.root.traceID, parentID: pas.id, opRef: ev.scorerRef,
		inputs: map[string]any{"expected": row["expected"], "output": "Paris"}, output: correct, start: at + 11*time.Millisecond, end: at + 12*time.Millisecond}
	pas.output = map[string]any{"output": "Paris", "scores": map[string]any{"exact_match": correct}, "model_latency": 0.009}
	calls := []any{predict.complete(s.project), score.complete(s.project), pas.complete(s.project)}
	return pas, calls, pyRunnableFeedback(s.project, "exact_match", ev.scorerRef, pas.id, score.id, correct)
}

// calls streams the calls matching filter, with their feedback.
func (s *pySDK) calls(filter map[string]any) []map[string]any {
	s.t.Helper()
	status, raw := s.c.do(http.MethodPost, "/traces/calls/stream_query", map[string]any{"project_id": s.project,
		"filter": filter, "query": nil, "sort_by": nil, "limit": nil, "offset": nil, "include_feedback": true,
		"include_costs": false, "columns": nil, "expand_columns": nil})
	if status != http.StatusOK {
		s.t.Fatalf("calls/stream_query = %d: %s", status, raw)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var c map[string]any
		if err := json.Unmarshal(line, &c); err != nil {
			s.t.Fatalf("line %s: %v", line, err)
		}
		out = append(out, c)
	}
	return out
}

func (s *pySDK) checkRenamed(id string) {
	var read struct{ Call map[string]any }
	s.send(http.MethodPost, "/traces/call/read", map[string]any{"project_id": s.project, "id": id,
		"include_costs": false, "include_storage_size": false, "include_total_storage_size": false}, &read)
	if c := read.Call; c == nil || c["display_name"] != "renamed at once" || c["output"] != 3.0 || c["wb_user_id"] != "py-user" {
		s.t.Errorf("renamed call read back %v; want display_name \"renamed at once\", output 3, wb_user_id py-user", read.Call)
	}
}

// checkDataset reads the Dataset back as the SDK does: the object, then
// its rows, then one row through its ref.
func (s *pySDK) checkDataset(ref string, rows []map[string]any) {
	digest := ref[bytes.LastIndexByte([]byte(ref), ':')+1:]
	status, raw := s.c.do(http.MethodPost, "/traces/obj/read", map[string]any{"project_id": s.project, "object_id": "qa", "digest": digest, "metadata_only": false})
	if want := `"val":{"_type":"Dataset","name":"qa","description":null,"rows":"weave:///`; status != http.StatusOK || !bytes.Contains(raw, []byte(want)) {
		s.t.Fatalf("obj/read = %d %s; want the value in the order sent, holding %s", status, raw, want)
	}
	var obj struct {
		Obj struct{ Val struct{ Rows string } }
	}
	_ = json.Unmarshal(raw, &obj)
	table := obj.Obj.Val.Rows[bytes.LastIndexByte([]byte(obj.Obj.Val.Rows), '/')+1:]
	var got struct {
		Rows []struct{ Val map[string]any }
	}
	s.send(http.MethodPost, "/traces/table/query", map[string]any{"project_id": s.project, "digest": table}, &got)
	if len(got.Rows) != len(rows) {
		s.t.Fatalf("table/query gave %d rows, want %d", len(got.Rows), len(rows))
	}
	for i, r := range got.Rows {
		if fmt.Sprint(r.Val) != fmt.Sprint(rows[i]) {
			s.t.Errorf("row %d = %v, want %v", i, r.Val, rows[i])
		}
	}
}

// checkEvaluation reads the evaluation's trace: the root finished with
// its output, each row's predict_and_score under it with the model's and
// the scorer's calls and its score feedback.
func (s *pySDK) checkEvaluation(ev pyEval, nRows int) {
	calls := s.calls(map[string]any{"trace_ids": []string{ev.root.traceID}})
	if len(calls) != 1+3*nRows+1 {
		s.t.Fatalf("%d calls in the evaluation's trace; want %d", len(calls), 1+3*nRows+1)
	}
	byParent := map[string][]map[string]any{}
	for _, c := range calls {
		p, _ := c["parent_id"].(string)
		byParent[p] = append(byParent[p], c)
	}
	root := byParent[""]
	if len(root) != 1 || root[0]["id"] != ev.root.id || root[0]["ended_at"] == nil || root[0]["output"] == nil {
		s.t.Fatalf("evaluation root %v", root)
	}
	if len(byParent[ev.root.id]) != nRows+1 {
		s.t.Errorf("root has %d children; want %d rows and the summary", len(byParent[ev.root.id]), nRows)
	}
	for _, pas := range ev.rows {
		if kids := byParent[pas.id]; len(kids) != 2 {
			s.t.Errorf("predict_and_score %s has %d children; want the model and the scorer", pas.id, len(kids))
		}
	}
	for _, c := range byParent[ev.root.id] {
		if c["op_name"] != ev.rows[0].opRef {
			continue
		}
		fb, _ := c["summary"].(map[string]any)["weave"].(map[string]any)["feedback"].([]any)
		if len(fb) != 1 || fb[0].(map[string]any)["feedback_type"] != "wandb.runnable.exact_match" || fb[0].(map[string]any)["runnable_ref"] != ev.scorerRef {
			s.t.Errorf("feedback of %s: %v", c["id"], fb)
		}
		s.checkFeedbackReadable(c["id"].(string))
	}
}

// pyFeedbackModel are the fields of the SDK's Feedback model up to
// 0.52.29, which refuses any other.
var pyFeedbackModel = []string{"id", "project_id", "weave_ref", "creator", "feedback_type", "payload", "annotation_ref",
	"runnable_ref", "call_ref", "trigger_ref", "queue_id", "wb_user_id", "created_at"}

// checkFeedbackReadable reads a call's feedback as call.feedback does
// and checks every row parses into the SDK's Feedback model.
func (s *pySDK) checkFeedbackReadable(callID string) {
	ref := "weave:///" + s.project + "/call/" + callID
	var res struct {
		Result []map[string]any `json:"result"`
	}
	s.send(http.MethodPost, "/traces/feedback/query", map[string]any{"project_id": s.project, "fields": nil,
		"query":   map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "weave_ref"}, map[string]any{"$literal": ref}}}},
		"sort_by": []any{map[string]any{"field": "created_at", "direction": "asc"}}, "offset": nil, "limit": nil}, &res)
	if len(res.Result) != 1 {
		s.t.Fatalf("feedback of %s: %d rows, want 1", callID, len(res.Result))
	}
	for k := range res.Result[0] {
		if !slices.Contains(pyFeedbackModel, k) {
			s.t.Errorf("feedback of %s carries %q: the SDK's Feedback model refuses it", callID, k)
		}
	}
}
