package webui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func trainingJobs(t *testing.T, p page, f trainingFixture) {
	p.open("/acme/app/training")
	p.waitFor("document.querySelectorAll('table.jobs tbody tr').length === 2")
	if st := p.texts("table.jobs .badge"); strings.Join(st, ",") != "queued,succeeded" {
		t.Errorf("job statuses, newest first = %v, want queued, succeeded", st)
	}
	if models := p.texts("table.jobs tbody td:nth-child(2)"); len(models) != 2 || models[0] != "agent" {
		t.Errorf("job models = %v, want agent", models)
	}
	p.shot("training")
	p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`table.jobs a[href$=%q]`, f.done))))
	p.waitFor("document.querySelectorAll('table.events tbody tr').length === 4")
	types := p.texts("table.events tbody td:nth-child(2)")
	if strings.Join(types, ",") != "training_started,gradient_step,gradient_step,training_ended" {
		t.Errorf("events = %v", types)
	}
	if got := eval[string](p, "location.pathname"); got != "/acme/app/training/"+f.done {
		t.Errorf("job address = %q", got)
	}
	if data := p.texts("table.events tbody td:nth-child(3)"); len(data) != 4 || data[2] != `{"loss":0.25}` {
		t.Errorf("event data = %v", data)
	}
	noStrayNull(t, p)
	p.shot("training-job")
	p.open("/acme/app/training?model=" + f.model)
	p.waitFor("document.querySelector('#f-model')?.value === '" + f.model + "' && document.querySelectorAll('table.jobs tbody tr').length === 2")
}

func modelsPage(t *testing.T, p page, f trainingFixture) {
	p.open("/acme/app/models")
	p.waitFor("document.querySelectorAll('table.models tbody tr').length === 1")
	p.do(chromedp.Click(chromedp.CSS("table.models a")))
	p.waitFor("document.querySelectorAll('table.checkpoints tbody tr').length === 1")
	if got := eval[string](p, "location.pathname"); got != "/acme/app/models/"+f.model {
		t.Errorf("model address = %q", got)
	}
	head, cells := p.texts("table.checkpoints th"), p.texts("table.checkpoints tbody td")
	if len(head) < 2 || head[1] != "train/loss" || len(cells) < 2 || cells[0] != "1" || cells[1] != "0.2500" {
		t.Errorf("checkpoints = %v %v, want step 1 with train/loss 0.25", head, cells)
	}
	if jobs := p.texts("table.jobs tbody tr"); len(jobs) != 2 {
		t.Errorf("the model's jobs = %d rows, want 2", len(jobs))
	}
	noStrayNull(t, p)
	p.shot("model")
}

func automationsPages(t *testing.T, p page, w weft, f trainingFixture) {
	p.open("/acme/app/automations")
	p.waitFor("!!document.querySelector('main p')?.textContent.includes('Only admins')")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.admin)))
	defer p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.key)))
	p.open("/acme/app/automations")
	p.waitFor("document.querySelectorAll('table.automations tbody tr').length === 1")
	if hooks := p.texts("table.webhooks tbody td"); len(hooks) < 3 || hooks[0] != "deploy" || hooks[2] != "ok" {
		t.Errorf("webhooks = %v, want deploy, healthy", hooks)
	}
	p.do(chromedp.Click(chromedp.CSS("table.automations a")))
	p.waitFor("document.querySelector('h1')?.textContent === 'new checkpoint'")
	if facts := eval[string](p, "document.querySelector('dl.facts').innerText"); !strings.Contains(facts, "deploy (http://127.0.0.1") {
		t.Errorf("automation facts lack its webhook's name and address:\n%s", facts)
	}
	for range 100 { // the checkpoint's alias was delivered, maybe not yet
		if st := p.texts("table.deliveries .badge"); len(st) == 1 && st[0] == "delivered" {
			break
		}
		p.open(eval[string](p, "location.pathname"))
		p.waitFor("!!document.querySelector('table.deliveries, .empty')")
	}
	if st := p.texts("table.deliveries .badge"); len(st) != 1 || st[0] != "delivered" {
		t.Fatalf("deliveries = %v, want one delivered", st)
	}
	checkNames(t, p)
	before := f.hooks.Load()
	p.do(chromedp.Click(chromedp.CSS("table.deliveries button")))
	p.waitFor("document.querySelector('#status').textContent.includes('queued again')")
	for range 200 {
		if f.hooks.Load() > before {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if f.hooks.Load() <= before {
		t.Errorf("redelivery reached the receiver %d times in all, want more than %d", f.hooks.Load(), before)
	}
	p.shot("automation")
}

// noStrayNull fails when a missing value was shown as the text "null".
func noStrayNull(t *testing.T, p page) {
	t.Helper()
	if lines := eval[[]string](p, "document.querySelector('main').innerText.split('\\n').filter(l => l.trim() === 'null')"); len(lines) > 0 {
		t.Errorf("the page shows %d stray null lines", len(lines))
	}
}
