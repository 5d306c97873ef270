package webui_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftdev/weft/internal/browsertest"
)

// evalRows counts the rows a page's table of evaluation rows shows.
const evalRows = "document.querySelectorAll('table.eval-rows tbody tr').length"

// TestBrowserEvaluations seeds two evaluations of one three-row dataset
// as the Python SDK writes them, then lists them, opens one's rows and
// compares both: the row where their verdicts differ comes first.
func TestBrowserEvaluations(t *testing.T) {
	w := startWeft(t)
	a, b := seedEvaluations(t, w)
	p := page{t: t, ctx: browsertest.New(t, 90*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}

	p.open("/acme/app/evaluations")
	p.waitFor("!!document.querySelector('#apikey')")
	p.do(chromedp.SendKeys(chromedp.CSS("#apikey"), w.key), chromedp.Click(chromedp.CSS("form.signin button")))
	p.waitFor("document.querySelectorAll('table.evaluations tbody tr').length === 2")
	if models := p.texts("table.evaluations td.model"); strings.Join(models, ",") != "ModelB,ModelA" {
		t.Errorf("models, newest first = %v, want ModelB, ModelA", models)
	}
	if ds := p.texts("table.evaluations td.dataset"); strings.Join(ds, ",") != "qa,qa" {
		t.Errorf("datasets = %v, want qa twice", ds)
	}
	if st := p.texts("table.evaluations .badge"); strings.Join(st, ",") != "success,success" {
		t.Errorf("statuses = %v", st)
	}
	if n := p.texts("table.evaluations td.rows"); strings.Join(n, ",") != "3,3" {
		t.Errorf("rows = %v, want 3 each", n)
	}
	scores := p.texts("table.evaluations li[data-score='exact_match.true_fraction']")
	if strings.Join(scores, ",") != "exact_match.true_fraction: 1,exact_match.true_fraction: 0.667" {
		t.Errorf("summary scores = %v", scores)
	}
	if !eval[bool](p, "document.querySelector('#compare').disabled") {
		t.Error("Compare is enabled with nothing picked")
	}
	checkNames(t, p)
	p.shot("evaluations")

	p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`table.evaluations a.eval[href$=%q]`, a))))
	p.waitFor(evalRows + " === 3")
	if got := eval[string](p, "location.pathname"); got != "/acme/app/evaluations/"+a {
		t.Errorf("evaluation address = %q", got)
	}
	out := p.texts("table.eval-rows td.output")
	slices.Sort(out)
	if strings.Join(out, ",") != "Paris,Paris,Rome" {
		t.Errorf("model outputs = %v, want Paris, Paris, Rome", out)
	}
	if costs := p.texts("table.eval-rows td:nth-child(7)"); strings.Join(costs, ",") != "$0.05,$0.05,$0.05" {
		t.Errorf("row costs = %v, want each trial's model cost", costs)
	}
	if total := p.texts("#eval-stats [data-fact=cost]"); len(total) != 1 || total[0] != "$0.15" {
		t.Errorf("model cost = %v, want $0.15", total)
	}
	links := eval[[]string](p, "[...document.querySelectorAll('table.eval-rows a.trace-link')].map(a => a.pathname).sort()")
	if want := []string{"/acme/app/calls/" + a + "-pas-0", "/acme/app/calls/" + a + "-pas-1", "/acme/app/calls/" + a + "-pas-2"}; !slices.Equal(links, want) {
		t.Errorf("trace links = %v, want each trial's predict_and_score call %v", links, want)
	}
	p.do(chromedp.SetValue(chromedp.CSS("#f-sort"), "exact_match"), chromedp.SetValue(chromedp.CSS("#f-dir"), "asc"),
		chromedp.Click(chromedp.CSS("form.filters button[type=submit]")))
	p.waitFor("location.search.includes('sort=exact_match') && " + evalRows + " === 3")
	if in := p.texts("table.eval-rows td.input"); len(in) != 3 || !strings.Contains(in[0], "Spain") {
		t.Errorf("rows by exact_match, lowest first = %v, want the failed Spain row first", in)
	}
	checkNames(t, p)
	p.do(chromedp.SetValue(chromedp.CSS("#f-score"), "exact_match"), chromedp.SetValue(chromedp.CSS("#f-value"), "fail"),
		chromedp.Click(chromedp.CSS("form.filters button[type=submit]")))
	p.waitFor("location.search.includes('v=fail') && " + evalRows + " === 1")
	if in := p.texts("table.eval-rows td.input"); len(in) != 1 || !strings.Contains(in[0], "Spain") {
		t.Errorf("failed rows = %v, want the Spain row", in)
	}
	p.shot("evaluation")

	p.open("/acme/app/evaluations")
	p.waitFor("document.querySelectorAll('table.evaluations tbody tr').length === 2")
	p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf("input[value=%q]", a))), chromedp.Click(chromedp.CSS(fmt.Sprintf("input[value=%q]", b))))
	p.waitFor("!document.querySelector('#compare').disabled")
	p.do(chromedp.Click(chromedp.CSS("#compare")))
	p.waitFor("document.querySelectorAll('table.compare-rows tbody tr').length === 3")
	if got := eval[string](p, "location.pathname + location.search"); got != "/acme/app/evaluations/compare?ids="+b+","+a {
		t.Errorf("comparison address = %q", got)
	}
	in := p.texts("table.compare-rows td.input")
	if len(in) != 3 || !strings.Contains(in[0], "Spain") {
		t.Errorf("compared rows = %v, want the Spain row (the verdicts differ) first", in)
	}
	if bars := eval[int](p, "document.querySelectorAll('figure.chart[data-field=exact_match] rect').length"); bars != 2 {
		t.Errorf("exact_match chart has %d bars, want one per evaluation", bars)
	}
	if cap := eval[string](p, "document.querySelector('figure.chart[data-field=exact_match] figcaption').textContent"); !strings.Contains(cap, "100% pass") || !strings.Contains(cap, "67% pass") {
		t.Errorf("chart caption = %q, want both pass rates", cap)
	}
	if n := eval[int](p, "document.querySelectorAll('table.compare-rows tbody tr:first-child a.trace-link').length"); n != 2 {
		t.Errorf("the first compared row links %d traces, want one per evaluation", n)
	}
	checkNames(t, p)
	noStrayNull(t, p)
	p.shot("evaluations-compare")
}

// seedEvaluations writes, through the Weave API, a dataset "qa" of three
// rows, an evaluation object over it and two Evaluation.evaluate traces
// as the Python SDK writes them: ModelA (older) gets the second row
// wrong, ModelB (newer) gets every row right. It answers their root ids.
func seedEvaluations(t *testing.T, w weft) (a, b string) {
	t.Helper()
	rows := []map[string]any{
		{"question": "capital of France?", "expected": "Paris"},
		{"question": "capital of Spain?", "expected": "Madrid"},
		{"question": "capital of Italy?", "expected": "Rome"},
	}
	var table struct {
		Digest     string
		RowDigests []string `json:"row_digests"`
	}
	decode(t, w.post(t, "/table/create", map[string]any{"table": map[string]any{"project_id": "acme/app", "rows": rows}}), &table)
	var ds, ev struct{ Digest string }
	decode(t, w.post(t, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": "qa",
		"val": map[string]any{"_type": "Dataset", "_class_name": "Dataset", "_bases": []string{"Object", "BaseModel"},
			"name": "qa", "rows": "weave:///acme/app/table/" + table.Digest}}}), &ds)
	dataset := "weave:///acme/app/object/qa:" + ds.Digest
	decode(t, w.post(t, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": "qa-eval",
		"val": map[string]any{"_type": "Evaluation", "_class_name": "Evaluation", "_bases": []string{"Object", "BaseModel"},
			"name": "qa-eval", "dataset": dataset, "scorers": []string{}, "trials": 1}}}), &ev)
	evalRef := "weave:///acme/app/object/qa-eval:" + ev.Digest
	base := time.Now().Add(-time.Hour)
	one := func(root, model string, at time.Time, correct []bool) {
		op := func(name string) string { return "weave:///acme/app/op/" + name + ":0123456789abcdef" }
		modelRef := "weave:///acme/app/object/" + model + ":0123456789abcdef"
		var batch []map[string]any
		add := func(id, parent, opName string, inputs, output, summary any, start, end time.Duration) {
			s := map[string]any{"project_id": "acme/app", "id": id, "trace_id": root + "-trace", "op_name": opName,
				"started_at": at.Add(start).UTC().Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": inputs}
			if parent != "" {
				s["parent_id"] = parent
			}
			e := map[string]any{"project_id": "acme/app", "id": id, "ended_at": at.Add(end).UTC().Format(time.RFC3339Nano),
				"output": output, "summary": summary}
			batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": s}},
				map[string]any{"mode": "end", "req": map[string]any{"end": e}})
		}
		right := 0
		for i, ok := range correct {
			output := rows[i]["expected"]
			if !ok {
				output = "Paris"
			} else {
				right++
			}
			pas := fmt.Sprintf("%s-pas-%d", root, i)
			start := time.Duration(i+1) * 100 * time.Millisecond
			rowRef := fmt.Sprintf("%s/attr/rows/id/%s", dataset, table.RowDigests[i])
			add(pas+"-predict", pas, op(model+".predict"), map[string]any{"self": modelRef, "question": rows[i]["question"]}, output,
				// 20,000 prompt tokens of gpt-4o cost $0.05 at the default prices.
				map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"requests": 1, "prompt_tokens": 20000, "completion_tokens": 0,
					"total_tokens": 20000}}},
				start+time.Millisecond, start+10*time.Millisecond)
			add(pas+"-score", pas, op("exact_match"), map[string]any{"expected": rows[i]["expected"], "output": output}, ok,
				map[string]any{}, start+11*time.Millisecond, start+12*time.Millisecond)
			add(pas, root, op("Evaluation.predict_and_score"), map[string]any{"self": evalRef, "model": modelRef, "example": rowRef},
				map[string]any{"output": output, "scores": map[string]any{"exact_match": ok}, "model_latency": map[string]any{"mean": 0.009}},
				map[string]any{}, start, start+50*time.Millisecond)
		}
		summary := map[string]any{"exact_match": map[string]any{"true_count": right, "true_fraction": float64(right) / 3},
			"model_latency": map[string]any{"mean": 0.009}}
		add(root+"-summarize", root, op("Evaluation.summarize"), map[string]any{"self": evalRef}, summary, map[string]any{},
			900*time.Millisecond, 950*time.Millisecond)
		add(root, "", op("Evaluation.evaluate"), map[string]any{"self": evalRef, "model": modelRef}, summary, map[string]any{}, 0, time.Second)
		w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
	}
	one("eval-a", "ModelA", base, []bool{true, false, true})
	one("eval-b", "ModelB", base.Add(time.Minute), []bool{true, true, true})
	return "eval-a", "eval-b"
}

// TestBrowserEvaluationsPages lists more evaluations than a page holds:
// the first page shows the newest 200 and links the older ones, whose
// page links back.
func TestBrowserEvaluationsPages(t *testing.T) {
	w := startWeft(t)
	const n = 205
	digest := strings.Repeat("A", 43) // the form of a content digest; no such object is stored
	base := time.Now().Add(-time.Hour)
	var batch []map[string]any
	for i := range n {
		id := fmt.Sprintf("ev-%03d", i)
		at := base.Add(time.Duration(i) * time.Second)
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
			"project_id": "acme/app", "id": id, "trace_id": id, "op_name": "weave:///acme/app/op/Evaluation.evaluate:0123456789abcdef",
			"started_at": at.UTC().Format(time.RFC3339Nano), "attributes": map[string]any{},
			"inputs": map[string]any{"self": "weave:///acme/app/object/qa-eval:" + digest, "model": "weave:///acme/app/object/M:" + digest}}}},
			map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{"project_id": "acme/app", "id": id,
				"ended_at": at.Add(time.Millisecond).UTC().Format(time.RFC3339Nano), "output": map[string]any{}, "summary": map[string]any{}}}})
	}
	w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
	p := page{t: t, ctx: browsertest.New(t, 90*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}
	p.open("/")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.key)))
	p.open("/acme/app/evaluations")
	p.waitFor("document.querySelectorAll('table.evaluations tbody tr').length === 200")
	ids := eval[[]string](p, "[...document.querySelectorAll('table.evaluations tbody tr')].map(r => r.dataset.id)")
	if ids[0] != "ev-204" || ids[199] != "ev-005" {
		t.Errorf("first page runs %s .. %s, want the newest 200: ev-204 .. ev-005", ids[0], ids[199])
	}
	if eval[int](p, "document.querySelectorAll('nav.pager a[rel=prev]').length") != 0 {
		t.Error("the first page links a newer page")
	}
	p.do(chromedp.Click(chromedp.CSS("nav.pager a[rel=next]")))
	p.waitFor("location.search === '?page=2' && document.querySelectorAll('table.evaluations tbody tr').length === 5")
	ids = eval[[]string](p, "[...document.querySelectorAll('table.evaluations tbody tr')].map(r => r.dataset.id)")
	if strings.Join(ids, ",") != "ev-004,ev-003,ev-002,ev-001,ev-000" {
		t.Errorf("second page = %v, want the 5 oldest", ids)
	}
	if status := eval[string](p, "document.querySelector('#status').textContent"); status != "evaluations 201–205" {
		t.Errorf("status = %q", status)
	}
	if eval[int](p, "document.querySelectorAll('nav.pager a[rel=next]').length") != 0 {
		t.Error("the last page links an older page")
	}
	p.do(chromedp.Click(chromedp.CSS("nav.pager a[rel=prev]")))
	p.waitFor("location.search === '' && document.querySelectorAll('table.evaluations tbody tr').length === 200")
}
