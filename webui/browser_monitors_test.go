package webui_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
	"github.com/weftdev/weft/internal/browsertest"
)

// monitorRows counts the monitors listed.
const monitorRows = "document.querySelectorAll('table.monitors tbody tr:not(.errors)').length"

// boolSchema is the verdict schema of a true-or-false scorer.
var boolSchema = map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "boolean"},
	"reason": map[string]any{"type": "string"}}, "required": []any{"verdict", "reason"}, "additionalProperties": false}

// judgeVal is an LLM-as-judge scorer's value in the reference's shape.
func judgeVal(name, model, prompt string, schema map[string]any) map[string]any {
	return map[string]any{"_type": "LLMAsAJudgeScorer", "_class_name": "LLMAsAJudgeScorer", "_bases": []string{"Scorer", "Object", "BaseModel"},
		"name": name, "description": nil, "column_map": nil, "scoring_prompt": prompt,
		"model": map[string]any{"_type": "LLMStructuredCompletionModel", "_class_name": "LLMStructuredCompletionModel",
			"_bases": []string{"BaseObject", "BaseModel"}, "name": nil, "description": nil, "llm_model_id": model,
			"default_params": map[string]any{"messages_template": []any{}, "temperature": 0, "response_format": "json",
				"response_format_schema": schema}}}
}

// publishObj stores val as the next version of object id and answers its
// ref.
func publishObj(t *testing.T, w weft, id string, val map[string]any) string {
	t.Helper()
	var res struct{ Digest string }
	decode(t, w.post(t, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": id, "val": val}}), &res)
	return "weave:///acme/app/object/" + id + ":" + res.Digest
}

// storedObj is an object version as /objs/query answers it.
type storedObj struct {
	ObjectID     string         `json:"object_id"`
	Digest       string         `json:"digest"`
	VersionIndex int            `json:"version_index"`
	Val          map[string]any `json:"val"`
}

// objVersions reads every version of object id, oldest first.
func objVersions(t *testing.T, w weft, id string) []storedObj {
	t.Helper()
	var res struct{ Objs []storedObj }
	decode(t, w.post(t, "/objs/query", map[string]any{"project_id": "acme/app", "filter": map[string]any{"object_ids": []string{id}},
		"sort_by": []map[string]any{{"field": "created_at", "direction": "asc"}}}), &res)
	return res.Objs
}

// at reads a path of nested JSON objects.
func at(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// jsonEqual compares two values as JSON documents.
func jsonEqual(t *testing.T, got, want any) bool {
	t.Helper()
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(got), norm(want))
}

// verdict writes a scorer's verdict on a call as a monitor's runner does.
func verdict(t *testing.T, w weft, call, scorer, scorerRef, monitorRef string, output map[string]any) {
	t.Helper()
	w.post(t, "/feedback/create", map[string]any{"project_id": "acme/app", "weave_ref": "weave:///acme/app/call/" + call,
		"feedback_type": "wandb.runnable." + scorer, "payload": map[string]any{"output": output},
		"runnable_ref": scorerRef, "trigger_ref": monitorRef})
}

// TestBrowserMonitors walks the online scorer UI: seeded monitors and
// scorers are listed (status unavailable until a runner answers, then
// its figures and errors), form errors name their field, the forms
// publish scorers and monitors of the reference's shapes, activating,
// deactivating and deleting publish or remove versions, and verdicts
// show as columns of the calls table that filter it, and in the trace
// view beside the human feedback.
func TestBrowserMonitors(t *testing.T) {
	up := upstreamtest.New(upstreamtest.Options{})
	t.Cleanup(up.Close)
	w := startWeft(t, func(c *config.Config) {
		c.Inference.Providers = []catalog.ProviderConfig{{Name: "fake", BaseURL: up.BaseURL()}}
		c.Inference.Models = []catalog.ModelConfig{
			{ID: "judge-a", Upstreams: []catalog.UpstreamConfig{{Provider: "fake"}}},
			{ID: "judge-b", Upstreams: []catalog.UpstreamConfig{{Provider: "fake"}}},
		}
	})
	now := time.Now().Add(-time.Minute)
	var batch []map[string]any
	for i := range 4 {
		batch = append(batch, callOps(fmt.Sprintf("chat-%d", i), fmt.Sprintf("trace-chat-%d", i), "", "chat",
			now.Add(time.Duration(i)*time.Second), time.Second, map[string]any{"question": fmt.Sprint("q", i)}, map[string]any{}, "")...)
	}
	w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
	correct := publishObj(t, w, "correct", judgeVal("correct", "judge-a", "Is {output} right for {inputs.question}?", boolSchema))
	numSchema := map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "number", "minimum": 0, "maximum": 10},
		"reason": map[string]any{"type": "string"}}, "required": []any{"verdict", "reason"}, "additionalProperties": false}
	rating := publishObj(t, w, "rating", judgeVal("rating", "judge-a", "Rate {output} from 0 to 10", numSchema))
	prod := publishObj(t, w, "prod-chat", map[string]any{"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"},
		"name": "prod-chat", "description": "chat in production", "sampling_rate": 0.5, "scorers": []string{correct, rating},
		"op_names": []string{"weave:///acme/app/op/chat:*"}, "query": nil, "active": true, "daily_spend_cap_usd": 2.5})
	verdict(t, w, "chat-0", "correct", correct, prod, map[string]any{"verdict": true, "reason": "it is Paris"})
	verdict(t, w, "chat-1", "correct", correct, prod, map[string]any{"verdict": false, "reason": "wrong city"})
	verdict(t, w, "chat-0", "rating", rating, prod, map[string]any{"verdict": 8, "reason": "good"})
	verdict(t, w, "chat-1", "rating", rating, prod, map[string]any{"verdict": 3, "reason": "poor"})
	w.post(t, "/feedback/create", map[string]any{"project_id": "acme/app", "weave_ref": "weave:///acme/app/call/chat-0",
		"feedback_type": "wandb.note.1", "payload": map[string]any{"note": "checked by hand"}})

	p := page{t: t, ctx: browsertest.New(t, 120*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}
	p.open("/")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.key)))

	t.Run("lists monitors and scorers", func(t *testing.T) {
		p.t = t
		p.open("/acme/app/monitors")
		p.waitFor(monitorRows + " === 1 && document.querySelectorAll('#s-model option').length === 2")
		if cur := p.texts("#nav a[aria-current=page]"); len(cur) != 1 || cur[0] != "Monitors" {
			t.Errorf("navigation marks %v as the current page, want Monitors", cur)
		}
		cells := p.texts("table.monitors tbody tr td")
		if len(cells) < 11 || cells[0] != "active" || cells[1] != "50 %" || cells[2] != "chat" || cells[3] != "correct, rating" ||
			cells[4] != "$2.50" || cells[5] != "$0.00" || cells[6] != "0" || cells[7] != "0" || cells[8] != "0" || cells[9] != "—" {
			t.Errorf("listed monitor = %q", cells)
		}
		if name := p.texts("table.monitors tbody tr th"); len(name) != 1 || !strings.HasPrefix(name[0], "prod-chat") {
			t.Errorf("monitor name = %q", name)
		}
		// The server's status answers (no judge ran: the verdicts were
		// seeded), so no "unavailable" note shows.
		if note := eval[string](p, "document.querySelector('#monitors-status').hidden ? '' : document.querySelector('#monitors-status').textContent"); note != "" {
			t.Errorf("status note = %q, want none while /monitors/status answers", note)
		}
		if got := p.texts("table.scorers tbody tr td:nth-child(4)"); strings.Join(got, "|") != "true or false|a number (0 to 10)" {
			t.Errorf("scorer verdicts = %q", got)
		}
		if got := p.texts("#m-scorers label"); strings.Join(got, ",") != "correct,rating" {
			t.Errorf("scorers to choose = %q", got)
		}
		checkNames(t, p)
		p.shot("monitors")
	})

	t.Run("the runner's status and errors", func(t *testing.T) {
		p.t = t
		// The page reads the status again on its refresh: answer it with
		// figures and a failure no seeded store holds without a judge.
		p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const real = window.fetch;
		  window.fetch = (url, init) => url === '/monitors/status' ? Promise.resolve(new Response(JSON.stringify({ monitors: [{
		    monitor_ref: %q, name: 'prod-chat', active: true, sampling_rate: 0.5, scorers: [], daily_spend_cap_usd: 2.5,
		    spend_today_usd: 0.42, scored: 12, failed: 1, skipped: 30, last_scored_at: new Date().toISOString(),
		    errors: [{ call_id: 'chat-3', scorer_ref: %q, at: new Date().toISOString(), message: 'judge answered no JSON' }] }] }),
		    { status: 200, headers: { 'Content-Type': 'application/json' } })) : real(url, init); })()`, prod, correct)))
		p.waitFor("document.querySelector('table.monitors [data-fact=scored]')?.textContent === '12'")
		if got := p.texts("table.monitors tbody tr:first-child td[data-fact]"); strings.Join(got, "|") != "$0.42|12|1|30" {
			t.Errorf("status figures = %q", got)
		}
		if got := p.texts("ul.monitor-errors li"); len(got) != 1 || !strings.Contains(got[0], "call chat-3 · correct: judge answered no JSON") {
			t.Errorf("errors = %q", got)
		}
		if href := eval[string](p, "document.querySelector('ul.monitor-errors a').getAttribute('href')"); href != "/acme/app/calls/chat-3" {
			t.Errorf("error links to %q", href)
		}
		if !eval[bool](p, "document.querySelector('#monitors-status').hidden") {
			t.Error("status note shown while the status answers")
		}
		p.shot("monitors-status")
		p.open("/acme/app/monitors") // a fresh page: no stand-in runner
		p.waitFor(monitorRows + " === 1")
	})

	t.Run("the scorer form names the wrong field and publishes the reference's shape", func(t *testing.T) {
		p.t = t
		p.do(chromedp.Click(chromedp.CSS("form.scorer-form button[type=submit]")))
		p.waitFor("document.querySelector('#scorer-error').textContent !== ''")
		if got := eval[string](p, "document.querySelector('#scorer-error').textContent + '|' + document.activeElement.id + '|' + document.activeElement.getAttribute('aria-invalid')"); got != "Name: give the scorer a name|s-name|true" {
			t.Errorf("empty form error = %q", got)
		}
		pick(p, "#s-kind", "label")
		pick(p, "#s-model", "judge-b")
		p.do(chromedp.SendKeys(chromedp.CSS("#s-name"), "tone"), chromedp.SendKeys(chromedp.CSS("#s-labels"), "polite"),
			chromedp.SendKeys(chromedp.CSS("#s-prompt"), "Is {output} polite?"), chromedp.Click(chromedp.CSS("form.scorer-form button[type=submit]")))
		p.waitFor("document.querySelector('#scorer-error').textContent.startsWith('Labels:')")
		if got := eval[string](p, "document.activeElement.id"); got != "s-labels" {
			t.Errorf("focus on %q after a labels error", got)
		}
		p.do(chromedp.SendKeys(chromedp.CSS("#s-labels"), ", rude, polite"), chromedp.Click(chromedp.CSS("form.scorer-form button[type=submit]")))
		p.waitFor("document.querySelectorAll('table.scorers tbody tr').length === 3")
		if got := eval[string](p, "document.querySelector('#scorer-error').textContent + '|' + document.querySelector('#s-labels').hasAttribute('aria-invalid')"); got != "|false" {
			t.Errorf("after publishing the form shows %q, want the error cleared", got)
		}
		vs := objVersions(t, w, "tone")
		if len(vs) != 1 {
			t.Fatalf("tone has %d versions, want 1", len(vs))
		}
		want := judgeVal("tone", "judge-b", "Is {output} polite?", map[string]any{"type": "object", "properties": map[string]any{
			"verdict": map[string]any{"type": "string", "enum": []string{"polite", "rude"}}, "reason": map[string]any{"type": "string"}},
			"required": []any{"verdict", "reason"}, "additionalProperties": false})
		if !jsonEqual(t, vs[0].Val, want) {
			t.Errorf("published scorer = %v\nwant %v", vs[0].Val, want)
		}

		// A number verdict with its bounds.
		pick(p, "#s-kind", "number")
		p.do(chromedp.SendKeys(chromedp.CSS("#s-name"), "depth"), chromedp.SendKeys(chromedp.CSS("#s-min"), "5"),
			chromedp.SendKeys(chromedp.CSS("#s-max"), "1"), chromedp.SendKeys(chromedp.CSS("#s-prompt"), "How deep is {output}?"),
			chromedp.Click(chromedp.CSS("form.scorer-form button[type=submit]")))
		p.waitFor("document.querySelector('#scorer-error').textContent === 'Maximum: must be above the minimum'")
		p.do(chromedp.SetValue(chromedp.CSS("#s-min"), "1"), chromedp.SetValue(chromedp.CSS("#s-max"), "5"),
			chromedp.Click(chromedp.CSS("form.scorer-form button[type=submit]")))
		p.waitFor("document.querySelectorAll('table.scorers tbody tr').length === 4")
		vs = objVersions(t, w, "depth")
		if len(vs) != 1 || vs[0].Val["_class_name"] != "LLMAsAJudgeScorer" ||
			!jsonEqual(t, at(vs[0].Val, "model", "default_params", "response_format_schema", "properties", "verdict"),
				map[string]any{"type": "number", "minimum": 1, "maximum": 5}) || at(vs[0].Val, "model", "llm_model_id") != "judge-a" {
			t.Errorf("published number scorer = %v", vs)
		}
		if got := p.texts("#m-scorers label"); strings.Join(got, ",") != "correct,depth,rating,tone" {
			t.Errorf("scorers to choose after publishing = %q", got)
		}
	})

	t.Run("the monitor form names the wrong field and publishes the reference's shape", func(t *testing.T) {
		p.t = t
		submit := chromedp.Click(chromedp.CSS("form.monitor-form button[type=submit]"))
		p.do(chromedp.SendKeys(chromedp.CSS("#m-name"), "polite chat"), submit)
		p.waitFor("document.querySelector('#monitor-error').textContent !== ''")
		if got := eval[string](p, "document.querySelector('#monitor-error').textContent + '|' + document.activeElement.id"); !strings.HasPrefix(got, "Name: use at most 128 letters") || !strings.HasSuffix(got, "|m-name") {
			t.Errorf("monitor name error = %q", got)
		}
		p.do(chromedp.SetValue(chromedp.CSS("#m-name"), "polite-chat"), submit)
		p.waitFor("document.querySelector('#monitor-error').textContent.startsWith('Op names')")
		if got := eval[string](p, "document.querySelector('#monitor-error').textContent + '|' + document.activeElement.id"); got != "Op names: name at least one op to score|m-ops" {
			t.Errorf("monitor error = %q", got)
		}
		p.do(chromedp.SendKeys(chromedp.CSS("#m-ops"), "chat, weave:///acme/app/op/answer:*"), chromedp.SetValue(chromedp.CSS("#m-rate"), "2"), submit)
		p.waitFor("document.querySelector('#monitor-error').textContent === 'Sampling rate: must be between 0 and 1'")
		p.do(chromedp.SetValue(chromedp.CSS("#m-rate"), "0.25"), chromedp.SetValue(chromedp.CSS("#m-query"), "{nope"), submit)
		p.waitFor("document.querySelector('#monitor-error').textContent === 'Calls query: is not valid JSON'")
		p.do(chromedp.SetValue(chromedp.CSS("#m-query"), `{"$expr": {"$eq": [{"$getField": "inputs.lang"}, {"$literal": "en"}]}}`), submit)
		p.waitFor("document.querySelector('#monitor-error').textContent === 'Scorers: choose at least one scorer'")
		if got := eval[string](p, "document.activeElement.dataset.name + '|' + document.querySelector('#m-scorers').getAttribute('aria-invalid')"); got != "correct|true" {
			t.Errorf("after a scorers error the focus and mark are %q", got)
		}
		p.do(chromedp.Click(chromedp.CSS(`#m-scorers input[data-name="tone"]`)), chromedp.SendKeys(chromedp.CSS("#m-cap"), "5"), submit)
		p.waitFor(monitorRows + " === 2")
		vs := objVersions(t, w, "polite-chat")
		tone := objVersions(t, w, "tone")
		if len(vs) != 1 || len(tone) != 1 {
			t.Fatalf("versions: monitor %d, scorer %d", len(vs), len(tone))
		}
		want := map[string]any{"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"},
			"name": "polite-chat", "description": nil, "sampling_rate": 0.25,
			"scorers": []string{"weave:///acme/app/object/tone:" + tone[0].Digest}, "op_names": []string{"chat", "weave:///acme/app/op/answer:*"},
			"query":  map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "inputs.lang"}, map[string]any{"$literal": "en"}}}},
			"active": true, "daily_spend_cap_usd": 5}
		if !jsonEqual(t, vs[0].Val, want) {
			t.Errorf("published monitor = %v\nwant %v", vs[0].Val, want)
		}
		var monitors struct{ Objs []storedObj }
		decode(t, w.post(t, "/objs/query", map[string]any{"project_id": "acme/app",
			"filter": map[string]any{"base_object_classes": []string{"Monitor"}, "latest_only": true}}), &monitors)
		if len(monitors.Objs) != 2 {
			t.Errorf("%d monitors by base class, want 2", len(monitors.Objs))
		}
	})

	t.Run("activate, deactivate and delete", func(t *testing.T) {
		p.t = t
		p.do(chromedp.Click(chromedp.CSS(`button[aria-label="Deactivate monitor prod-chat"]`)))
		p.waitFor(`document.querySelector('tr[data-name="prod-chat"] [data-active]')?.dataset.active === 'false'`)
		vs := objVersions(t, w, "prod-chat")
		if len(vs) != 2 || vs[1].Val["active"] != false || vs[1].VersionIndex != 1 || vs[0].Val["active"] != true ||
			!jsonEqual(t, vs[1].Val["scorers"], []string{correct, rating}) || vs[1].Val["sampling_rate"] != 0.5 {
			t.Errorf("after deactivating, versions = %v", vs)
		}
		p.do(chromedp.Click(chromedp.CSS(`button[aria-label="Activate monitor prod-chat"]`)))
		p.waitFor(`document.querySelector('tr[data-name="prod-chat"] [data-active]')?.dataset.active === 'true'`)
		// Active again is the first version's content: it is the latest
		// again, under its digest.
		var latest struct{ Objs []storedObj }
		decode(t, w.post(t, "/objs/query", map[string]any{"project_id": "acme/app",
			"filter": map[string]any{"object_ids": []string{"prod-chat"}, "latest_only": true}}), &latest)
		if len(latest.Objs) != 1 || latest.Objs[0].Val["active"] != true || "weave:///acme/app/object/prod-chat:"+latest.Objs[0].Digest != prod {
			t.Errorf("after activating, the latest version = %v", latest.Objs)
		}
		p.do(chromedp.Click(chromedp.CSS(`button[aria-label="Delete monitor polite-chat"]`)))
		p.waitFor(`!!document.querySelector('button[aria-label="Confirm deleting monitor polite-chat"]')`)
		if n := len(objVersions(t, w, "polite-chat")); n != 1 {
			t.Errorf("a first click deleted the monitor (%d versions left)", n)
		}
		p.do(chromedp.Click(chromedp.CSS(`button[aria-label="Confirm deleting monitor polite-chat"]`)))
		p.waitFor(monitorRows + " === 1")
		if vs := objVersions(t, w, "polite-chat"); len(vs) != 0 {
			t.Errorf("after deleting, versions = %v", vs)
		}
	})

	t.Run("verdict columns and filters in the calls table", func(t *testing.T) {
		p.t = t
		tone := objVersions(t, w, "tone")[0]
		verdict(t, w, "chat-2", "tone", "weave:///acme/app/object/tone:"+tone.Digest, prod, map[string]any{"verdict": "rude", "reason": "curt"})
		p.open("/acme/app/calls")
		p.waitFor(rows + " === 4 && document.querySelectorAll('table.calls th.verdict').length === 3")
		if got := p.texts("table.calls th.verdict"); strings.Join(got, ",") != "correct,rating,tone" {
			t.Errorf("verdict columns = %q", got)
		}
		if href := eval[string](p, "document.querySelector('table.calls th.verdict a').getAttribute('href')"); href != "/acme/app/monitors" {
			t.Errorf("verdict column links to %q", href)
		}
		// Newest first: chat-3, chat-2 unscored; chat-1 false, 3; chat-0 true, 8.
		if got := p.texts(`table.calls td.verdict[data-scorer="correct"]`); strings.Join(got, ",") != "—,—,false,true" {
			t.Errorf("correct verdicts = %q", got)
		}
		if got := p.texts(`table.calls td.verdict[data-scorer="rating"]`); strings.Join(got, ",") != "—,—,3,8" {
			t.Errorf("rating verdicts = %q", got)
		}
		checkNames(t, p)
		filter := func(scorer, op, value, search string, want ...string) {
			t.Helper()
			pick(p, "#f-vscorer", scorer)
			pick(p, "#f-vop", op)
			p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("document.querySelector('#f-vval').value = %q", value)),
				chromedp.Click(chromedp.CSS("form.filters > button[type=submit]")))
			if len(want) == 0 {
				p.waitFor(fmt.Sprintf("location.search === %q && document.querySelector('main p.empty')?.textContent === 'No calls match.'", search))
				return
			}
			p.waitFor(fmt.Sprintf("location.search === %q && %s === %d", search, rows, len(want)))
			ids := eval[[]string](p, "[...document.querySelectorAll('table.calls a.op')].map(a => a.pathname.split('/').pop())")
			if strings.Join(ids, ",") != strings.Join(want, ",") {
				t.Errorf("%s %s %s: rows %v, want %v", scorer, op, value, ids, want)
			}
		}
		filter("correct", "true", "", "?vscorer=correct&vop=true", "chat-0")
		p.shot("calls-verdicts")
		filter("correct", "false", "", "?vscorer=correct&vop=false", "chat-1")
		filter("rating", "gt", "5", "?vscorer=rating&vop=gt&vval=5", "chat-0")
		filter("rating", "lt", "5", "?vscorer=rating&vop=lt&vval=5", "chat-1")
		filter("correct", "any", "", "?vscorer=correct&vop=any", "chat-1", "chat-0")
		p.waitFor("document.querySelector('#calls-count').textContent === '2 traces'")
		pick(p, "#f-vscorer", "tone")
		if got := eval[[]string](p, "[...document.querySelectorAll('#f-vval-labels option')].map(o => o.value)"); strings.Join(got, ",") != "polite,rude" {
			t.Errorf("labels offered for tone = %q", got)
		}
		filter("tone", "eq", "rude", "?vscorer=tone&vop=eq&vval=rude", "chat-2")
		filter("tone", "eq", "polite", "?vscorer=tone&vop=eq&vval=polite")
	})

	t.Run("the trace view shows the verdicts beside the feedback", func(t *testing.T) {
		p.t = t
		p.open("/acme/app/calls/chat-0")
		p.waitFor("document.querySelector('.feedback-body')?.dataset.loaded === 'true' && !!document.querySelector('table.verdicts')")
		if got := p.texts("table.verdicts tbody tr td:nth-child(-n+4)"); strings.Join(got, "|") != "correct|true|it is Paris|prod-chat|rating|8|good|prod-chat" {
			t.Errorf("verdicts = %q", got)
		}
		if href := eval[string](p, "document.querySelector('table.verdicts a').getAttribute('href')"); href != "/acme/app/monitors?monitor=prod-chat" {
			t.Errorf("monitor link = %q", href)
		}
		if got := p.texts("ul.feedback li .what"); strings.Join(got, ",") != "checked by hand" {
			t.Errorf("human feedback = %q, want the note alone", got)
		}
		checkNames(t, p)
		p.shot("trace-verdicts")
		p.do(chromedp.Click(chromedp.CSS("table.verdicts a")))
		p.waitFor(`location.pathname === '/acme/app/monitors' && document.querySelector('tr[data-name="prod-chat"]')?.getAttribute('aria-current') === 'true'`)
	})
}
