package traceapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/traceapi"
)

// evalStore is what the evaluation-run endpoints and the calls API need
// of a backend; both backends are one.
type evalStore interface {
	storage.CallWriter
	traceapi.CallReader
	storage.ObjectStore
	storage.FileStore
	storage.FeedbackStore
}

// evalEnv serves the evaluation-run endpoints, the calls API and the
// objects API over one store; call writes go to the store's write path
// as the pipeline hands them on.
type evalEnv struct {
	t   *testing.T
	mux *http.ServeMux
	// project is the subtest's own project: subtests share the store.
	project string
	caller  auth.Principal
}

func newEvalEnv(t *testing.T, store evalStore) *evalEnv {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	const maxBody = 4 << 20
	mux := http.NewServeMux()
	noWrap := func(h http.Handler) http.Handler { return h }
	writes := consumer.CallsFunc(store.WriteCallOps)
	traceapi.NewEvaluationRunsAPI(writes, store, traceapi.EvalRunStores{Objects: store, Files: store, Feedback: store},
		maxBody, logger).Register(mux, noWrap)
	traceapi.New(store, traceapi.CallExtras{Feedback: store}, maxBody, logger).Register(mux, noWrap)
	traceapi.NewObjectsAPI(store, maxBody, logger).Register(mux, noWrap)
	return &evalEnv{t: t, mux: mux, caller: principal("acme", auth.RoleMember)}
}

// runEvalSuite runs every evaluation-run case over the store open makes,
// each subtest in a project of its own.
func runEvalSuite(t *testing.T, open func(t *testing.T) evalStore) {
	base := newEvalEnv(t, open(t))
	for _, tc := range []struct {
		name string
		run  func(e *evalEnv)
	}{
		{"lifecycle", testEvalLifecycle},
		{"calls_view", testEvalCallsView},
		{"standalone", testEvalStandalone},
		{"list_filters", testEvalListFilters},
		{"deletes", testEvalDeletes},
		{"errors", testEvalErrors},
		{"scoping", testEvalScoping},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := *base
			e.t, e.project = t, "acme/"+tc.name
			tc.run(&e)
		})
	}
}

func TestEvaluationRunsDuckDB(t *testing.T) {
	runEvalSuite(t, func(t *testing.T) evalStore {
		s, err := duckdb.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// send issues a request as the env's caller and returns the status and
// the raw answer.
func (e *evalEnv) send(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var raw []byte
	if s, ok := body.(string); ok {
		raw = []byte(s)
	} else if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			e.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req = req.WithContext(httpapi.WithPrincipal(req.Context(), e.caller))
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// ok sends a request that must answer 200 and returns the JSON answer.
func (e *evalEnv) ok(method, path string, body any) map[string]any {
	e.t.Helper()
	status, out := e.send(method, path, body)
	if status != http.StatusOK {
		e.t.Fatalf("%s %s = %d: %s", method, path, status, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		e.t.Fatalf("%s %s: %v in %s", method, path, err, out)
	}
	return m
}

// lines sends a request that must answer 200 with JSON Lines.
func (e *evalEnv) lines(method, path string, body any) []map[string]any {
	e.t.Helper()
	status, out := e.send(method, path, body)
	if status != http.StatusOK {
		e.t.Fatalf("%s %s = %d: %s", method, path, status, out)
	}
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			e.t.Fatalf("%s %s: line %q: %v", method, path, sc.Text(), err)
		}
		rows = append(rows, row)
	}
	return rows
}

// v2 is the path of a v2 endpoint in the env's project.
func (e *evalEnv) v2(rest string) string { return "/v2/" + e.project + "/" + rest }

// ref is an object ref into the env's project.
func (e *evalEnv) ref(name string) string {
	return "weave:///" + e.project + "/object/" + name + ":0123456789abcdef"
}

func (e *evalEnv) createRun(evaluation, model string) string {
	e.t.Helper()
	res := e.ok("POST", e.v2("evaluation_runs"), map[string]any{"evaluation": evaluation, "model": model})
	return res["evaluation_run_id"].(string)
}

func (e *evalEnv) createPrediction(body map[string]any) string {
	e.t.Helper()
	return e.ok("POST", e.v2("predictions"), body)["prediction_id"].(string)
}

func (e *evalEnv) createScore(body map[string]any) string {
	e.t.Helper()
	return e.ok("POST", e.v2("scores"), body)["score_id"].(string)
}

// calls returns the project's calls a calls filter selects, as the calls
// API streams them, with their feedback.
func (e *evalEnv) calls(filter map[string]any) []map[string]any {
	e.t.Helper()
	return e.lines("POST", "/calls/stream_query", map[string]any{"project_id": e.project, "filter": filter,
		"include_feedback": true})
}

// byOp indexes calls by the op name their op ref (or plain name) names.
func byOp(calls []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, c := range calls {
		op := c["op_name"].(string)
		if i := strings.Index(op, "/op/"); i >= 0 {
			op = op[i+len("/op/"):]
			op, _, _ = strings.Cut(op, ":")
		}
		out[op] = append(out[op], c)
	}
	return out
}

func ids(rows []map[string]any, key string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[key].(string))
	}
	return out
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testEvalLifecycle creates a run, a prediction with two scores, finishes
// both and reads and lists the run at each step.
func testEvalLifecycle(e *evalEnv) {
	t := e.t
	evaluation, model := e.ref("qa-eval"), e.ref("MyModel")
	run := e.createRun(evaluation, model)
	got := e.ok("GET", e.v2("evaluation_runs/"+run), nil)
	if got["evaluation_run_id"] != run || got["evaluation"] != evaluation || got["model"] != model ||
		got["status"] != "running" || got["finished_at"] != nil || got["started_at"] == nil {
		t.Fatalf("new run reads %v; want it running, with its refs and a start", got)
	}

	pred := e.createPrediction(map[string]any{"model": model, "inputs": map[string]any{"q": "2+2"}, "output": "4",
		"evaluation_run_id": run})
	e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("exact"), "value": 1, "evaluation_run_id": run})
	e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("fuzzy"), "value": 0.5, "evaluation_run_id": run})
	p := e.ok("GET", e.v2("predictions/"+pred), nil)
	want := map[string]any{"prediction_id": pred, "model": model, "inputs": map[string]any{"q": "2+2"}, "output": "4",
		"evaluation_run_id": run, "wb_user_id": e.caller.UserID}
	if jsonText(t, p) != jsonText(t, want) {
		t.Errorf("prediction reads %v; want %v", p, want)
	}
	e.ok("POST", e.v2("predictions/"+pred+"/finish"), nil)
	res := e.ok("POST", e.v2("evaluation_runs/"+run+"/finish"), map[string]any{"summary": map[string]any{"note": "done"}})
	if res["success"] != true {
		t.Fatalf("finish answered %v", res)
	}

	got = e.ok("GET", e.v2("evaluation_runs/"+run), nil)
	summary, _ := got["summary"].(map[string]any)
	if got["status"] != "completed" || got["finished_at"] == nil || summary["note"] != "done" {
		t.Fatalf("finished run reads %v; want it completed with the summary sent", got)
	}
	if w, _ := summary["weave"].(map[string]any); w["status"] != "success" || w["trace_name"] != "Evaluation.evaluate" {
		t.Errorf("summary.weave = %v; want the derived fields the calls API gives", summary["weave"])
	}
	listed := e.lines("GET", e.v2("evaluation_runs"), nil)
	if len(listed) != 1 || jsonText(t, listed[0]) != jsonText(t, got) {
		t.Errorf("list = %v; want exactly the run as read: %v", listed, got)
	}
	scores := e.lines("GET", e.v2("scores?evaluation_run_id="+run), nil)
	if len(scores) != 2 || scores[0]["value"] != 1.0 || scores[1]["value"] != 0.5 || scores[0]["scorer"] != e.ref("exact") {
		t.Errorf("scores of the run = %v; want exact 1.0 then fuzzy 0.5", scores)
	}
	s := e.ok("GET", e.v2("scores/"+ids(scores, "score_id")[1]), nil)
	if s["evaluation_run_id"] != run || s["value"] != 0.5 || s["wb_user_id"] != e.caller.UserID {
		t.Errorf("score reads %v", s)
	}
}

// testEvalCallsView checks the calls a run leaves, as the calls API (and
// so the UI) sees them: the trace Evaluation.evaluate would have written.
func testEvalCallsView(e *evalEnv) {
	t := e.t
	// An op the SDK published under the name the run's op ref carries.
	sdkOp := e.ok("POST", "/obj/create", map[string]any{"obj": map[string]any{"project_id": e.project,
		"object_id": "Evaluation.evaluate", "val": map[string]any{"_type": "CustomWeaveType",
			"weave_type": map[string]any{"type": "Op"}, "files": map[string]any{"obj.py": "sdk-source"}}}})["digest"]
	evaluation, model := e.ref("qa-eval"), e.ref("MyModel")
	run := e.createRun(evaluation, model)
	var preds []string
	for i, out := range []any{3, 5} {
		pred := e.createPrediction(map[string]any{"model": model, "inputs": map[string]any{"i": i}, "output": out,
			"evaluation_run_id": run})
		e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("acc"), "value": []float64{1, 0.5}[i], "evaluation_run_id": run})
		e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("len"), "value": 2.5, "evaluation_run_id": run})
		e.ok("POST", e.v2("predictions/"+pred+"/finish"), nil)
		preds = append(preds, pred)
	}
	e.ok("POST", e.v2("evaluation_runs/"+run+"/finish"), `{}`)

	calls := e.calls(map[string]any{"trace_ids": []string{run}})
	ops := byOp(calls)
	counts := map[string]int{}
	for op, cs := range ops {
		counts[op] = len(cs)
	}
	wantCounts := map[string]int{"Evaluation.evaluate": 1, "Evaluation.predict_and_score": 2, "MyModel.predict": 2,
		"acc.score": 2, "len.score": 2, "Evaluation.summarize": 1}
	if jsonText(t, counts) != jsonText(t, wantCounts) {
		t.Fatalf("calls of the run's trace by op: %v; want %v", counts, wantCounts)
	}
	root := ops["Evaluation.evaluate"][0]
	if root["id"] != run || root["parent_id"] != nil || !strings.HasPrefix(root["op_name"].(string), "weave:///"+e.project+"/op/Evaluation.evaluate:") {
		t.Errorf("root call %v; want the run, an Evaluation.evaluate op ref, no parent", root)
	}
	if in := root["inputs"].(map[string]any); in["self"] != evaluation || in["model"] != model {
		t.Errorf("root inputs %v; want self and model refs as Evaluation.evaluate takes them", in)
	}
	wantOut := `{"acc":{"mean":0.75},"len":{"mean":2.5},"output":{"mean":4}}`
	if jsonText(t, root["output"]) != wantOut {
		t.Errorf("run output %s; want %s", jsonText(t, root["output"]), wantOut)
	}
	sum := ops["Evaluation.summarize"][0]
	if sum["parent_id"] != run || sum["op_name"] != "Evaluation.summarize" || jsonText(t, sum["output"]) != wantOut {
		t.Errorf("summarize call %v; want a child of the run with the run's output", sum)
	}
	for _, row := range ops["Evaluation.predict_and_score"] {
		if row["parent_id"] != run || row["trace_id"] != run || row["ended_at"] == nil {
			t.Errorf("row %v; want a finished child of the run", row)
		}
		in := row["inputs"].(map[string]any)
		if in["self"] != evaluation || in["model"] != model || in["example"] == nil {
			t.Errorf("row inputs %v; want self, model and example", in)
		}
		out := row["output"].(map[string]any)
		scores := out["scores"].(map[string]any)
		if _, ok := out["model_latency"].(map[string]any)["mean"].(float64); !ok || len(scores) != 2 || scores["len"] != 2.5 {
			t.Errorf("row output %v; want output, scores by scorer and model_latency.mean", out)
		}
	}
	rowOf := map[string]string{}
	for _, p := range ops["MyModel.predict"] {
		rowOf[p["id"].(string)] = p["parent_id"].(string)
		if attrs := p["attributes"].(map[string]any)["weave"].(map[string]any); attrs["prediction"] != "true" || attrs["evaluation_run_id"] != run {
			t.Errorf("prediction attributes %v", attrs)
		}
		fb := p["summary"].(map[string]any)["weave"].(map[string]any)["feedback"].([]any)
		var types []string
		for _, f := range fb {
			types = append(types, f.(map[string]any)["feedback_type"].(string))
		}
		slices.Sort(types)
		if !slices.Equal(types, []string{"wandb.runnable.acc", "wandb.runnable.len"}) {
			t.Errorf("prediction feedback types %v; want one runnable feedback per scorer", types)
		}
	}
	for _, s := range append(ops["acc.score"], ops["len.score"]...) {
		pred := s["attributes"].(map[string]any)["weave"].(map[string]any)["prediction_id"].(string)
		if s["parent_id"] != rowOf[pred] || rowOf[pred] == "" {
			t.Errorf("score %v; want it beside its prediction, under row %s", s["id"], rowOf[pred])
		}
	}
	if len(rowOf) != len(preds) {
		t.Errorf("predictions %v; want %v", rowOf, preds)
	}
	// The op refs name op objects the project holds.
	op := root["op_name"].(string)
	digest := op[strings.LastIndexByte(op, ':')+1:]
	obj := e.ok("POST", "/obj/read", map[string]any{"project_id": e.project, "object_id": "evaluation.evaluate", "digest": digest})
	if o := obj["obj"].(map[string]any); o["kind"] != "op" {
		t.Errorf("op object %v; want an op", o)
	}
	latest := e.ok("POST", "/obj/read", map[string]any{"project_id": e.project, "object_id": "Evaluation.evaluate", "digest": "latest"})
	if d := latest["obj"].(map[string]any)["digest"]; d != sdkOp {
		t.Errorf("the SDK's Evaluation.evaluate op is at %v; want it still at %v, untouched by the placeholder", d, sdkOp)
	}
	// Scores are stored as Python writes floats, so their means count them.
	_, raw := e.send("POST", "/calls/stream_query", map[string]any{"project_id": e.project,
		"filter": map[string]any{"call_ids": []string{ops["acc.score"][0]["id"].(string)}}})
	if !bytes.Contains(raw, []byte(`"output":1.0`)) {
		t.Errorf("score call %s; want its output written as 1.0", raw)
	}
}

// testEvalStandalone records a prediction and a score outside any run.
func testEvalStandalone(e *evalEnv) {
	t := e.t
	pred := e.createPrediction(map[string]any{"model": "model://plain", "inputs": map[string]any{}, "output": nil})
	score := e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("judge"), "value": 0.25})
	p := e.ok("GET", e.v2("predictions/"+pred), nil)
	if p["evaluation_run_id"] != nil || p["output"] != nil || jsonText(t, p["inputs"]) != "{}" {
		t.Errorf("standalone prediction reads %v", p)
	}
	calls := e.calls(map[string]any{"call_ids": []string{pred, score}})
	ops := byOp(calls)
	for op, id := range map[string]string{"Model.predict": pred, "judge.score": score} {
		c := ops[op]
		if len(c) != 1 || c[0]["id"] != id || c[0]["trace_id"] != id || c[0]["parent_id"] != nil {
			t.Errorf("%s calls %v; want %s as the root of its own trace", op, c, id)
		}
	}
	e.ok("POST", e.v2("predictions/"+pred+"/finish"), nil)
	if s := e.ok("GET", e.v2("scores/"+score), nil); s["evaluation_run_id"] != nil || s["value"] != 0.25 {
		t.Errorf("standalone score reads %v", s)
	}
	run := e.createRun("eval://x", "model://plain")
	if got := e.lines("GET", e.v2("predictions?evaluation_run_id="+run), nil); len(got) != 0 {
		t.Errorf("predictions of an empty run: %v", got)
	}
	if got := e.lines("GET", e.v2("predictions"), nil); len(got) != 1 || got[0]["prediction_id"] != pred {
		t.Errorf("predictions: %v", got)
	}
}

// testEvalListFilters lists runs by evaluation, model and id, paged.
func testEvalListFilters(e *evalEnv) {
	t := e.t
	a1 := e.createRun("eval://a", "model://1")
	a2 := e.createRun("eval://a", "model://2")
	b1 := e.createRun("eval://b", "model://1")
	e.createPrediction(map[string]any{"model": "model://1", "inputs": map[string]any{}, "output": 1, "evaluation_run_id": a1})
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{a1, a2, b1}},
		{"evaluations=eval://a", []string{a1, a2}},
		{"evaluation_refs=eval://b", []string{b1}},
		{"models=model://1", []string{a1, b1}},
		{"evaluations=eval://a&models=model://1", []string{a1}},
		{"evaluation_run_ids=" + a2 + "," + b1, []string{a2, b1}},
		{"evaluation_run_ids=" + a2 + "&evaluation_run_ids=" + a1, []string{a1, a2}},
		{"limit=2", []string{a1, a2}},
		{"limit=2&offset=2", []string{b1}},
		{"limit=0", nil},
		{"models=model://none", nil},
	} {
		got := ids(e.lines("GET", e.v2("evaluation_runs?"+tc.query), nil), "evaluation_run_id")
		if !slices.Equal(got, tc.want) {
			t.Errorf("list ?%s = %v; want %v", tc.query, got, tc.want)
		}
	}
}

// testEvalDeletes deletes records and what they hold.
func testEvalDeletes(e *evalEnv) {
	t := e.t
	run := e.createRun("eval://d", "model://d")
	pred := e.createPrediction(map[string]any{"model": "model://d", "inputs": map[string]any{}, "output": 1, "evaluation_run_id": run})
	score := e.createScore(map[string]any{"prediction_id": pred, "scorer": e.ref("s"), "value": 1, "evaluation_run_id": run})
	other := e.createPrediction(map[string]any{"model": "model://d", "inputs": map[string]any{}, "output": 2})
	kept := e.createPrediction(map[string]any{"model": "model://d", "inputs": map[string]any{}, "output": 3})

	res := e.ok("DELETE", e.v2("predictions?prediction_ids="+other+"&prediction_ids=no-such-id"), nil)
	if res["num_deleted"] != 1.0 {
		t.Errorf("deleting one prediction and an unknown id: %v", res)
	}
	res = e.ok("DELETE", e.v2("evaluation_runs?evaluation_run_ids="+run), nil)
	if res["num_deleted"] != 4.0 {
		t.Errorf("deleting a run of one row: %v; want the run, its row, prediction and score", res)
	}
	for _, path := range []string{"evaluation_runs/" + run, "predictions/" + pred, "scores/" + score, "predictions/" + other} {
		if status, out := e.send("GET", e.v2(path), nil); status != http.StatusNotFound {
			t.Errorf("GET %s after delete = %d %s; want 404", path, status, out)
		}
	}
	if got := ids(e.lines("GET", e.v2("predictions"), nil), "prediction_id"); !slices.Equal(got, []string{kept}) {
		t.Errorf("predictions left: %v; want %s", got, kept)
	}
	if got := e.calls(map[string]any{"trace_ids": []string{run}}); len(got) != 0 {
		t.Errorf("the deleted run's trace still has %d calls", len(got))
	}
}

// testEvalErrors checks each bad request's status and that its reason
// says what is wrong.
func testEvalErrors(e *evalEnv) {
	run := e.createRun("eval://e", "model://e")
	pred := e.createPrediction(map[string]any{"model": "model://e", "inputs": map[string]any{}, "output": 1})
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		mention            string
	}{
		{"unknown run", "GET", "evaluation_runs/no-such-run", nil, 404, "Evaluation run no-such-run not found"},
		{"prediction read as run", "GET", "evaluation_runs/" + pred, nil, 404, "not found"},
		{"run read as prediction", "GET", "predictions/" + run, nil, 404, "Prediction " + run + " not found"},
		{"unknown score", "GET", "scores/" + pred, nil, 404, "Score " + pred + " not found"},
		{"finish unknown run", "POST", "evaluation_runs/no-such-run/finish", `{}`, 404, "not found"},
		{"finish unknown prediction", "POST", "predictions/no-such/finish", nil, 404, "not found"},
		{"prediction of unknown run", "POST", "predictions", map[string]any{"model": "m", "inputs": map[string]any{},
			"output": 1, "evaluation_run_id": "no-such-run"}, 404, "Evaluation run no-such-run not found"},
		{"score of unknown prediction", "POST", "scores", map[string]any{"prediction_id": "nope", "scorer": e.ref("s"),
			"value": 1}, 404, "Prediction nope not found"},
		{"score of unknown run", "POST", "scores", map[string]any{"prediction_id": pred, "scorer": e.ref("s"),
			"value": 1, "evaluation_run_id": "nope"}, 404, "Evaluation run nope not found"},
		{"run without model", "POST", "evaluation_runs", map[string]any{"evaluation": "x"}, 422, "model"},
		{"run with unknown field", "POST", "evaluation_runs", map[string]any{"evaluation": "x", "model": "y", "extra": 1}, 422, "extra"},
		{"inputs not an object", "POST", "predictions", map[string]any{"model": "m", "inputs": []int{1}, "output": 1}, 422, "inputs"},
		{"value not a number", "POST", "scores", map[string]any{"prediction_id": pred, "scorer": e.ref("s"), "value": "high"}, 422, "value"},
		{"scorer not a ref", "POST", "scores", map[string]any{"prediction_id": pred, "scorer": "judge", "value": 1}, 400, "scorer"},
		{"scorer of another project", "POST", "scores", map[string]any{"prediction_id": pred,
			"scorer": "weave:///acme/elsewhere/object/s:1", "value": 1}, 400, "scorer"},
		{"summary not an object", "POST", "evaluation_runs/" + run + "/finish", `{"summary":[1]}`, 422, "summary"},
		{"bad id", "GET", "evaluation_runs/a%20b", nil, 400, "evaluation_run_id"},
		{"negative limit", "GET", "evaluation_runs?limit=-1", nil, 400, "limit"},
		{"limit not a number", "GET", "predictions?limit=ten", nil, 422, "limit"},
		{"limit over the bound", "GET", fmt.Sprintf("scores?limit=%d", traceapi.MaxEvalListLimit+1), nil, 400, "limit"},
		{"too many filter values", "GET", "evaluation_runs?models=" + strings.Repeat("m,", traceapi.MaxEvalFilterValues+1), nil, 400, "models"},
		{"delete without ids", "DELETE", "scores", nil, 422, "score_ids"},
		{"delete too many", "DELETE", "predictions?prediction_ids=" + strings.Repeat("x,", traceapi.MaxEvalDeleteIDs+1), nil, 413, "1000"},
	} {
		status, out := e.send(tc.method, e.v2(tc.path), tc.body)
		var res struct{ Reason string }
		if err := json.Unmarshal(out, &res); status != tc.status || err != nil {
			e.t.Errorf("%s: %s %s = %d %s; want %d with a JSON reason", tc.name, tc.method, tc.path, status, out, tc.status)
			continue
		}
		if !strings.Contains(res.Reason, tc.mention) {
			e.t.Errorf("%s: reason %q does not mention %q", tc.name, res.Reason, tc.mention)
		}
	}
	// A refused write left nothing behind.
	if got := e.lines("GET", e.v2("scores"), nil); len(got) != 0 {
		e.t.Errorf("refused scores were stored: %v", got)
	}
}

// testEvalScoping checks that records are read and written only in the
// project the path names, by callers authorised for it.
func testEvalScoping(e *evalEnv) {
	run := e.createRun("eval://s", "model://s")
	pred := e.createPrediction(map[string]any{"model": "model://s", "inputs": map[string]any{}, "output": 1, "evaluation_run_id": run})
	other := *e
	other.project = e.project + "-other"
	for _, path := range []string{"evaluation_runs/" + run, "predictions/" + pred} {
		if status, _ := other.send("GET", other.v2(path), nil); status != http.StatusNotFound {
			e.t.Errorf("GET %s from another project = %d; want 404", path, status)
		}
	}
	if got := other.lines("GET", other.v2("evaluation_runs"), nil); len(got) != 0 {
		e.t.Errorf("another project lists %v", got)
	}
	if status, _ := other.send("POST", other.v2("predictions"), map[string]any{"model": "m", "inputs": map[string]any{},
		"output": 1, "evaluation_run_id": run}); status != http.StatusNotFound {
		e.t.Errorf("a prediction in another project joined the run: %d", status)
	}
	if res := other.ok("DELETE", other.v2("evaluation_runs?evaluation_run_ids="+run), nil); res["num_deleted"] != 0.0 {
		e.t.Errorf("a delete in another project removed %v", res)
	}

	stranger := *e
	stranger.caller = principal("globex", auth.RoleMember)
	viewer := *e
	viewer.caller = principal("acme", auth.RoleViewer)
	for _, tc := range []struct {
		env          *evalEnv
		method, path string
		body         any
		status       int
	}{
		{&stranger, "GET", "evaluation_runs/" + run, nil, 403},
		{&stranger, "GET", "evaluation_runs", nil, 403},
		{&stranger, "POST", "evaluation_runs", map[string]any{"evaluation": "e", "model": "m"}, 403},
		{&viewer, "GET", "evaluation_runs/" + run, nil, 200},
		{&viewer, "GET", "predictions?evaluation_run_id=" + run, nil, 200},
		{&viewer, "POST", "evaluation_runs/" + run + "/finish", `{}`, 403},
		{&viewer, "POST", "predictions/" + pred + "/finish", nil, 403},
		{&viewer, "DELETE", "evaluation_runs?evaluation_run_ids=" + run, nil, 403},
		{&viewer, "POST", "scores", map[string]any{"prediction_id": pred, "scorer": e.ref("s"), "value": 1}, 403},
	} {
		if status, out := tc.env.send(tc.method, e.v2(tc.path), tc.body); status != tc.status {
			e.t.Errorf("%s as %s: %s %s = %d %s; want %d", tc.env.caller.Entity, tc.env.caller.Role, tc.method, tc.path, status, out, tc.status)
		}
	}
	if got := e.ok("GET", e.v2("evaluation_runs/"+run), nil); got["status"] != "running" {
		e.t.Errorf("a refused finish finished the run: %v", got)
	}
}
