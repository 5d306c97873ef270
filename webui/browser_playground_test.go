package webui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
	"github.com/weftdev/weft/internal/browsertest"
)

// TestBrowserPlayground runs chat messages against the gateway's models
// from the playground: one model streamed, with its usage and cost; two
// side by side; a stream shown before it ends; and traced LLM calls
// opened in the playground with their messages, model and parameters.
func TestBrowserPlayground(t *testing.T) {
	up := upstreamtest.New(upstreamtest.Options{Record: true, HoldInterval: 50 * time.Millisecond})
	t.Cleanup(up.Close)
	w := startWeft(t, func(c *config.Config) {
		c.Inference.Providers = []catalog.ProviderConfig{{Name: "fake", BaseURL: up.BaseURL()}}
		c.Inference.Models = []catalog.ModelConfig{
			{ID: "echo-a", Upstreams: []catalog.UpstreamConfig{{Provider: "fake"}}, Prices: catalog.Prices{InputPerMillion: 1000, OutputPerMillion: 2000}},
			{ID: "echo-b", Upstreams: []catalog.UpstreamConfig{{Provider: "fake"}}},
			{ID: "endless", Upstreams: []catalog.UpstreamConfig{{Provider: "fake", Model: "hold"}}},
		}
	})
	start := time.Now().Add(-time.Minute)
	w.post(t, "/call/upsert_batch", map[string]any{"batch": append(callOps("openai-1", "trace-openai", "", "openai.chat.completions.create", start, time.Second,
		map[string]any{"model": "gpt-4o-mini", "temperature": 0.3, "max_tokens": 64, "messages": []any{
			map[string]any{"role": "system", "content": "answer in French"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "capital of Italy?"}}}}}, map[string]any{}, ""),
		callOps("plain-1", "trace-plain", "", "retrieve", start, time.Second, map[string]any{"query": "x"}, map[string]any{}, "")...)})
	p := page{t: t, ctx: browsertest.New(t, 90*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}
	p.open("/")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.key)))

	// One model: pick it, write the messages, set a parameter, run.
	p.open("/acme/app/playground")
	p.waitFor("document.querySelectorAll('#model-1 option').length === 3")
	if got := p.texts("#model-1 option"); strings.Join(got, ",") != "echo-a,echo-b,endless" {
		t.Errorf("catalog = %v", got)
	}
	checkNames(t, p)
	if text := eval[string](p, "document.querySelector('main').innerText"); strings.Contains(text, "null") {
		t.Errorf("the page shows a stray null:\n%s", text)
	}
	pick(p, "#model-1", "echo-a")
	p.do(chromedp.SendKeys(chromedp.CSS(`textarea[aria-label="Content of message 1"]`), "be brief"),
		chromedp.SendKeys(chromedp.CSS(`textarea[aria-label="Content of message 2"]`), "hello there"),
		chromedp.SendKeys(chromedp.CSS("#p-temperature"), "0.5"), chromedp.Click(chromedp.CSS("form.playground button[type=submit]")))
	p.waitFor(`document.querySelector('[data-fact=cost] dd')?.textContent.startsWith('$')`)
	if out := p.texts(".column pre.output"); len(out) != 1 || out[0] != "echo: hello there" {
		t.Errorf("output = %v, want the echo of the user message", out)
	}
	if tokens := p.texts("[data-fact=total] dd"); len(tokens) != 1 || tokens[0] == "—" {
		t.Errorf("total tokens = %v, want a count", tokens)
	}
	if lat := p.texts("[data-fact=latency] dd"); len(lat) != 1 || !strings.HasSuffix(lat[0], "ms") && !strings.HasSuffix(lat[0], " s") {
		t.Errorf("latency = %v", lat)
	}
	reqs := up.Requests()
	if len(reqs) != 1 || string(reqs[0].Body["temperature"]) != "0.5" || !strings.Contains(string(reqs[0].Body["messages"]), `"be brief"`) {
		t.Fatalf("upstream got %d requests, first %v", len(reqs), reqs)
	}
	p.shot("playground")

	// Two models side by side on the same messages.
	p.do(chromedp.Click(chromedp.CSS("#add-model")))
	p.waitFor("!!document.querySelector('#model-2')")
	pick(p, "#model-2", "echo-b")
	p.do(chromedp.Click(chromedp.CSS("form.playground button[type=submit]")))
	p.waitFor(`[...document.querySelectorAll('[data-fact=cost] dd')].filter(d => d.textContent !== '…').length === 2 && !document.querySelector('form.playground button[type=submit]').disabled`)
	if out := p.texts(".column pre.output"); len(out) != 2 || out[0] != "echo: hello there" || out[1] != "echo: hello there" {
		t.Errorf("outputs = %v, want both echoes", out)
	}
	var models []string
	for _, r := range up.Requests()[1:] {
		var m string
		_ = json.Unmarshal(r.Body["model"], &m)
		models = append(models, m)
	}
	if len(models) != 2 || !(models[0] == "echo-a" && models[1] == "echo-b" || models[0] == "echo-b" && models[1] == "echo-a") {
		t.Errorf("second run reached the upstream as %v, want echo-a and echo-b", models)
	}
	checkNames(t, p)
	p.shot("playground-two")

	// The gateway's traced call opens in the playground with its inputs.
	p.do(chromedp.Click(chromedp.CSS(".column .trace-link a")))
	p.waitFor("!!document.querySelector('a.playground-link')")
	p.do(chromedp.Click(chromedp.CSS("a.playground-link")))
	p.waitFor("location.pathname === '/acme/app/playground' && document.querySelectorAll('li.message').length === 2 && !!document.querySelector('#from-call')")
	if got := eval[[]string](p, "[...document.querySelectorAll('li.message textarea')].map(t => t.value)"); strings.Join(got, "|") != "be brief|hello there" {
		t.Errorf("prefilled messages = %q", got)
	}
	if got := eval[string](p, "document.querySelector('#model-1').value + ' ' + document.querySelector('#p-temperature').value"); got != "echo-a 0.5" {
		t.Errorf("prefilled model and temperature = %q", got)
	}

	// An OpenAI chat call ingested through the Weave API: its content
	// parts become text; its model, not in the catalog, is kept.
	p.open("/acme/app/calls/openai-1")
	p.waitFor("!!document.querySelector('a.playground-link')")
	checkNames(t, p)
	p.do(chromedp.Click(chromedp.CSS("a.playground-link")))
	p.waitFor("document.querySelectorAll('li.message').length === 2 && !!document.querySelector('#from-call')")
	if got := eval[[]string](p, "[...document.querySelectorAll('li.message select, li.message textarea')].map(t => t.value)"); strings.Join(got, "|") != "system|answer in French|user|capital of Italy?" {
		t.Errorf("prefilled messages = %q", got)
	}
	if got := eval[string](p, "['#model-1', '#p-temperature', '#p-max_tokens', '#p-top_p'].map(s => document.querySelector(s).value).join(' ')"); got != "gpt-4o-mini 0.3 64 " {
		t.Errorf("prefilled model and parameters = %q", got)
	}
	checkNames(t, p)
	p.shot("playground-from-call")
	p.open("/acme/app/calls/plain-1")
	p.waitFor("document.querySelector('#call-title')?.textContent === 'retrieve'")
	if eval[bool](p, "!!document.querySelector('a.playground-link')") {
		t.Error("a call without chat messages links to the playground")
	}

	// A stream is shown while it runs, before it ends.
	p.open("/acme/app/playground")
	p.waitFor("document.querySelectorAll('#model-1 option').length === 3")
	pick(p, "#model-1", "endless")
	p.do(chromedp.SendKeys(chromedp.CSS(`textarea[aria-label="Content of message 2"]`), "go on"),
		chromedp.Click(chromedp.CSS("form.playground button[type=submit]")))
	p.waitFor("document.querySelector('.column pre.output').getAttribute('aria-busy') === 'true' && document.querySelector('.column pre.output').textContent.length > 0")
	p.do(chromedp.Click(chromedp.CSS(`#nav a[href$="/calls"]`)))
	p.waitFor("location.pathname === '/acme/app/calls'")
	for range 250 {
		if up.Canceled() > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if up.Canceled() == 0 {
		t.Error("leaving the page did not end the running stream (upstream still streaming)")
	}
}

// pick chooses value in the select sel as a user would: the change event
// follows.
func pick(p page, sel, value string) {
	p.t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q;
	  s.dispatchEvent(new Event('change', { bubbles: true })); })()`, sel, value)))
}
