package webui_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weftdev/weft/internal/browsertest"
)

// page drives one browser tab against one weft.
type page struct {
	t   testing.TB
	ctx context.Context
	url string
	dir string
}

func (p page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](p page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func (p page) waitFor(cond string) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond),
		chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string]("document.body.innerText"))
		p.t.Fatalf("waiting for %s: %v\npage shows:\n%s", cond, err, body)
	}
}

func (p page) open(path string) { p.do(chromedp.Navigate(p.url + path)) }

func (p page) texts(sel string) []string {
	return eval[[]string](p, fmt.Sprintf("[...document.querySelectorAll(%q)].map(e => e.textContent.trim())", sel))
}

func (p page) shot(name string) { browsertest.Screenshot(p.ctx, p.t, p.dir, name) }

const rows = "document.querySelectorAll('table.calls tbody tr').length"

// TestBrowserJourney ingests traces through the Weave API and OTLP, then
// walks the UI as a user would, in order: each step starts where the last
// one left the tab.
func TestBrowserJourney(t *testing.T) {
	w := startWeft(t)
	ingestWeave(t, w, time.Now())
	ingestOTLP(t, w)
	ingestDataset(t, w)
	tf := ingestTraining(t, w)
	p := page{t: t, ctx: browsertest.New(t, 90*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}
	for _, step := range []struct {
		name string
		run  func(t *testing.T, p page, w weft)
	}{
		{"shared address asks for the key, then shows the page", signIn},
		{"picker lists the key's projects", picker},
		{"status and time filters", filterStatusAndTime},
		{"free text filter", filterText},
		{"trace tree and details", traceTree},
		{"OTel call shows its raw span", otelSpan},
		{"charts", charts},
		{"live view shows new calls", liveView},
		{"deep pages by cursor", pagingByCursor},
		{"sort by tokens and cost", sortByUsage},
		{"threads", threads},
		{"datasets", datasets},
		{"training jobs and a job's events", func(t *testing.T, p page, w weft) { trainingJobs(t, p, tf) }},
		{"models and checkpoints", func(t *testing.T, p page, w weft) { modelsPage(t, p, tf) }},
		{"automations, webhooks and deliveries", func(t *testing.T, p page, w weft) { automationsPages(t, p, w, tf) }},
		{"accessible names and the keyboard", keyboardAndNames},
	} {
		t.Run(step.name, func(t *testing.T) {
			p.t = t
			step.run(t, p, w)
		})
	}
}

func signIn(t *testing.T, p page, w weft) {
	p.open("/acme/app/calls?op=chat")
	p.waitFor("!!document.querySelector('#apikey')")
	p.shot("signin")
	p.do(chromedp.SendKeys(chromedp.CSS("#apikey"), w.key), chromedp.Click(chromedp.CSS("form.signin button")))
	p.waitFor(rows + " === 2")
	if got := eval[string](p, "location.pathname + location.search"); got != "/acme/app/calls?op=chat" {
		t.Errorf("address after sign-in = %q", got)
	}
	if ops := p.texts("table.calls tbody td:first-child"); strings.Join(ops, ",") != "chat,chat" {
		t.Errorf("ops = %v, want two chat roots", ops)
	}
	if st := p.texts("table.calls .badge"); len(st) != 2 || st[0] != "error" || st[1] != "success" {
		t.Errorf("statuses (newest first) = %v, want error, success", st)
	}
}

func filterText(t *testing.T, p page, w weft) {
	p.do(chromedp.SendKeys(chromedp.CSS("#f-q"), "CAPITAL"), chromedp.Click(chromedp.CSS("form.filters button[type=submit]")))
	p.waitFor("location.search.includes('q=CAPITAL') && " + rows + " === 1")
	if tokens := p.texts("table.calls tbody td:nth-child(5)"); len(tokens) != 1 || tokens[0] != "—" {
		t.Errorf("root's own tokens = %v, want none (usage is on its child)", tokens)
	}
	p.shot("calls")
}

func traceTree(t *testing.T, p page, w weft) {
	p.do(chromedp.Click(chromedp.CSS("table.calls a.op")))
	p.waitFor("document.querySelectorAll('.tree-row').length === 3")
	if names := p.texts(".tree-row .name"); strings.Join(names, ",") != "chat,retrieve,llm" {
		t.Errorf("tree = %v, want chat, retrieve, llm in start order", names)
	}
	if in := eval[string](p, "document.querySelector('.details').innerText"); !strings.Contains(in, "What is the capital of France?") {
		t.Errorf("root details lack its input:\n%s", in)
	}
	// By keyboard: down twice from the root, then Enter.
	p.do(chromedp.Focus(chromedp.CSS(".tree-row")), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown),
		chromedp.KeyEvent(kb.Enter))
	p.waitFor("document.querySelector('#call-title').textContent === 'llm'")
	usage := p.texts("table.usage tbody td")
	if len(usage) != 6 || usage[0] != "gpt-4o" || usage[4] != "1,500" || !strings.HasPrefix(usage[5], "$") {
		t.Errorf("usage row = %v, want gpt-4o with 1,500 tokens and a cost", usage)
	}
	if got := eval[string](p, "location.pathname"); got != "/acme/app/calls/child-llm" {
		t.Errorf("address of the chosen call = %q", got)
	}
	if fb := p.texts("ul.feedback li"); len(fb) != 1 || !strings.Contains(fb[0], "short and right") {
		t.Errorf("feedback = %v, want the note", fb)
	}
	p.shot("trace")
	p.do(chromedp.Click(chromedp.CSS(`.tree-row[data-call-id="child-retrieve"]`)))
	p.waitFor("!!document.querySelector('.details a.ref')")
	p.do(chromedp.Click(chromedp.CSS(".details a.ref")))
	p.waitFor("location.pathname === '/acme/app/objects/evals' && document.querySelector('h1')?.textContent.startsWith('evals')")
}

func otelSpan(t *testing.T, p page, w weft) {
	p.open("/acme/app/calls?op=otel.agent")
	p.waitFor(rows + " === 1")
	p.do(chromedp.Click(chromedp.CSS("table.calls a.op")))
	p.waitFor("[...document.querySelectorAll('.section h3')].some(h => h.textContent === 'Raw OpenTelemetry span')")
}

func charts(t *testing.T, p page, w weft) {
	p.open("/acme/app/charts?range=1h")
	p.waitFor("!!document.querySelector('#chart-cost')")
	attr := func(id string) string {
		return eval[string](p, fmt.Sprintf("document.querySelector('#%s').dataset.total", id))
	}
	if got := attr("chart-calls"); got != "6" {
		t.Errorf("calls chart total = %s, want 6 (5 Weave calls and 1 span)", got)
	}
	if got := attr("chart-tokens"); got != "1521" {
		t.Errorf("tokens chart total = %s, want 1521", got)
	}
	if bars := eval[int](p, "document.querySelectorAll('#chart-calls rect').length"); bars < 2 {
		t.Errorf("calls chart draws %d bars, want one per busy minute", bars)
	}
	p.shot("charts")
	p.open("/acme/app/charts?range=1h&op=chat")
	p.waitFor("document.querySelector('#chart-calls')?.dataset.total === '2'")
	if got := attr("chart-errors"); got != "50" {
		t.Errorf("error rate of op chat = %s%%, want 50", got)
	}
	p.do(chromedp.Click(chromedp.CSS("#theme")))
	p.waitFor("document.documentElement.dataset.theme === 'dark'")
	p.shot("charts-dark")
}

func threads(t *testing.T, p page, w weft) {
	p.open("/acme/app/threads")
	p.waitFor("document.querySelectorAll('tbody tr').length === 1")
	p.do(chromedp.Click(chromedp.CSS("tbody a")))
	p.waitFor("document.querySelectorAll('.turns > li').length === 1")
	p.shot("thread")
}

func datasets(t *testing.T, p page, w weft) {
	p.open("/acme/app/datasets")
	p.waitFor("document.querySelectorAll('tbody tr').length === 1")
	if cells := p.texts("tbody td"); len(cells) < 3 || cells[0] != "evals" || cells[1] != "Dataset" || cells[2] != "v1" {
		t.Errorf("datasets row = %v, want evals, Dataset, v1", cells)
	}
	p.do(chromedp.Click(chromedp.CSS("tbody a")))
	p.waitFor("document.querySelectorAll('table.rows tbody tr').length === 2")
	if v := p.texts("ol.versions li"); len(v) != 2 {
		t.Errorf("versions = %v, want 2", v)
	}
	if cells := p.texts("table.rows tbody td"); !slices.Contains(cells, "Paris") {
		t.Errorf("dataset rows = %v, want the row expecting Paris", cells)
	}
	p.shot("dataset")
}

func picker(t *testing.T, p page, w weft) {
	w.post(t, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/prompts", "object_id": "system", "val": "be brief"}})
	p.open("/")
	p.waitFor("document.querySelectorAll('ul.projects li').length === 2")
	if got := p.texts("ul.projects a"); len(got) != 2 || got[0] != "acme/prompts" || got[1] != "acme/app" {
		t.Errorf("projects = %v, want acme/prompts (objects only, newest), acme/app", got)
	}
	hints := p.texts("ul.projects .hint")
	if len(hints) != 2 || !strings.HasPrefix(hints[0], "1 object, last active") || !strings.HasPrefix(hints[1], "6 calls, 3 objects, 1 table, 1 feedback,") {
		t.Errorf("what the projects hold = %q", hints)
	}
	if href := eval[string](p, "document.querySelector('ul.projects a').pathname"); href != "/acme/prompts/objects" {
		t.Errorf("an objects-only project opens %s, want its objects", href)
	}
	p.shot("picker")
	p.do(chromedp.Click(chromedp.CSS("ul.projects li:nth-child(2) a")))
	p.waitFor("location.pathname === '/acme/app/calls' && " + rows + " === 4") // chat twice, index, the span
	p.open("/acme/app/calls?op=chat")
	p.waitFor(rows + " === 2")
}

func filterStatusAndTime(t *testing.T, p page, _ weft) {
	p.open("/acme/app/calls?status=error")
	p.waitFor(rows + " === 1")
	if ops := p.texts("table.calls tbody td:first-child"); len(ops) != 1 || ops[0] != "chat" {
		t.Errorf("failed roots = %v, want the failed chat", ops)
	}
	// From 150 s ago: the index root (2 min ago) and the span (now).
	from := time.Now().Add(-150 * time.Second).UTC().Format(time.RFC3339)
	p.open("/acme/app/calls?from=" + from)
	p.waitFor(rows + " === 2")
	if ops := p.texts("table.calls tbody td:first-child"); strings.Join(ops, ",") != "otel.agent,index" {
		t.Errorf("roots since %s = %v, want otel.agent, index", from, ops)
	}
	p.open("/acme/app/calls?op=chat")
	p.waitFor(rows + " === 2")
}

func liveView(t *testing.T, p page, w weft) {
	p.open("/acme/app/calls?live=1&op=late")
	p.waitFor("document.querySelector('.empty') !== null")
	w.post(t, "/call/upsert_batch", map[string]any{"batch": callOps("late-1", "trace-late", "", "late", time.Now(),
		time.Second, map[string]any{}, map[string]any{}, "")})
	p.waitFor(rows + " === 1")
}
