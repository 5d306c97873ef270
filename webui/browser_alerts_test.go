package webui_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/browsertest"
)

// alertRows counts the alerts listed.
const alertRows = "document.querySelectorAll('table.alerts tbody tr:not(.history)').length"

// receiver records the bodies a webhook receives.
type receiver struct {
	mu     sync.Mutex
	bodies []string
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.bodies...)
}

// TestBrowserAlerts walks the Alerts page against a weft that evaluates
// alerts every second: a save error names its field, an alert is
// created, fires on erroring calls written through the API, is tested,
// edited (and resolves), its history read, and disabled.
func TestBrowserAlerts(t *testing.T) {
	w := startWeft(t, func(c *config.Config) { c.Automations.AlertInterval = time.Second })
	rc := &receiver{}
	hs := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, string(b))
		rc.mu.Unlock()
	}))
	t.Cleanup(hs.Close)
	var hook struct{ ID string }
	decode(t, w.send(t, http.MethodPost, "/webhooks/create", w.admin, map[string]any{"entity": "acme", "name": "pager", "url": hs.URL}), &hook)
	p := page{t: t, ctx: browsertest.New(t, 90*time.Second), url: w.url, dir: browsertest.ArtifactsDir(t)}

	p.open("/acme/app/alerts")
	p.waitFor("!!document.querySelector('#apikey')")
	p.do(chromedp.SendKeys(chromedp.CSS("#apikey"), w.key), chromedp.Click(chromedp.CSS("form.signin button")))
	p.waitFor("!!document.querySelector('main p')?.textContent.includes('Only admins')")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.admin)))
	p.open("/acme/app/alerts")
	p.waitFor("!!document.querySelector('form.alert-form') && !!document.querySelector('#alerts-list .empty')")
	if cur := p.texts("#nav a[aria-current=page]"); len(cur) != 1 || cur[0] != "Alerts" {
		t.Errorf("navigation marks %v as the current page, want Alerts", cur)
	}
	checkNames(t, p)

	// A 30 s window: the server's 400 names condition.window_seconds and
	// the form marks that field; nothing is saved.
	p.do(chromedp.SendKeys(chromedp.CSS("#a-name"), "chat errors"), chromedp.SetValue(chromedp.CSS("#a-metric"), "error_rate"),
		chromedp.SendKeys(chromedp.CSS("#a-ops"), "chat"), chromedp.SetValue(chromedp.CSS("#a-window"), "30"),
		chromedp.SetValue(chromedp.CSS("#a-comparator"), ">"), chromedp.SendKeys(chromedp.CSS("#a-threshold"), "0.3"),
		chromedp.SetValue(chromedp.CSS("#a-min-calls"), "5"), chromedp.SetValue(chromedp.CSS("#a-webhook"), hook.ID),
		chromedp.SetValue(chromedp.CSS("#a-payload"), `{"text": "${alert_name} is ${alert_state} at ${value}"}`),
		chromedp.Click(chromedp.CSS("form.alert-form button[type=submit]")))
	p.waitFor("document.querySelector('#alert-error').textContent !== ''")
	if msg := eval[string](p, "document.querySelector('#alert-error').textContent"); !strings.HasPrefix(msg, "Window (seconds): condition.window_seconds: must be between 60") {
		t.Errorf("save error = %q, want it to name the window field", msg)
	}
	if got := eval[string](p, "document.activeElement.id + ' ' + document.activeElement.getAttribute('aria-invalid') + ' ' + document.activeElement.getAttribute('aria-describedby')"); got != "a-window true a-window-hint alert-error" {
		t.Errorf("focused field = %q, want the window marked invalid and described by the error", got)
	}
	if n := len(listAlerts(t, w)); n != 0 {
		t.Fatalf("%d alerts saved after a refused save, want 0", n)
	}
	p.shot("alerts-error")

	p.do(chromedp.SetValue(chromedp.CSS("#a-window"), "300"), chromedp.Click(chromedp.CSS("form.alert-form button[type=submit]")))
	p.waitFor(alertRows + " === 1")
	cells := p.texts("table.alerts tbody tr td")
	if len(cells) < 8 || cells[0] != "chat errors" || cells[1] != "error rate" ||
		cells[2] != "error rate of chat > 30 % over 5 min, with at least 5 calls" || cells[3] != "ok" || cells[7] != "yes" {
		t.Errorf("listed alert = %q", cells)
	}
	if got := eval[string](p, "document.querySelector('#alert-error').textContent + '|' + document.querySelector('#alert-form-title').textContent + '|' + document.querySelector('#a-window').hasAttribute('aria-invalid')"); got != "|New alert|false" {
		t.Errorf("after a save the form shows %q, want it cleared for a new alert", got)
	}
	id := listAlerts(t, w)[0].ID

	// 5 errors in 10 chat calls: 50 % over the 30 % threshold.
	var batch []map[string]any
	now := time.Now()
	for i := range 10 {
		exc := ""
		if i < 5 {
			exc = "RateLimitError: slow down"
		}
		batch = append(batch, callOps(fmt.Sprintf("alert-%d", i), fmt.Sprintf("alert-trace-%d", i), "", "chat",
			now.Add(-3*time.Second), time.Second, map[string]any{}, map[string]any{}, exc)...)
	}
	w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
	p.waitFor("document.querySelector('table.alerts .badge')?.dataset.state === 'firing'")
	if cells := p.texts("table.alerts tbody tr td"); cells[4] != "50 %" || cells[5] == "—" || cells[6] == "—" {
		t.Errorf("firing alert = %q, want last value 50 %% and its times", cells)
	}
	for range 100 {
		if len(rc.got()) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := rc.got(); len(got) != 1 || !strings.Contains(got[0], `"chat errors is firing at 0.5"`) {
		t.Errorf("receiver got %q, want one firing notice", got)
	}

	p.do(chromedp.Click(chromedp.CSS(`table.alerts button[data-key="history:` + id + `"]`)))
	p.waitFor("document.querySelectorAll('table.transitions tbody tr').length === 1")
	if got := p.texts("table.transitions tbody td"); len(got) != 5 || got[0] != "1" || got[2] != "firing" || got[3] != "50 %" || got[4] != "30 %" {
		t.Errorf("history = %q, want one firing at 50 %% over 30 %%", got)
	}
	if got := eval[string](p, "location.pathname"); got != "/acme/app/alerts/"+id {
		t.Errorf("address with the history open = %q", got)
	}

	// Edit: the form holds the alert; Test measures it now, then with a
	// threshold it would not cross; saving resolves the alert.
	p.do(chromedp.Click(chromedp.CSS(`table.alerts button[data-key="edit:` + id + `"]`)))
	p.waitFor("document.querySelector('#alert-form-title').textContent === 'Edit alert chat errors'")
	if got := eval[string](p, "['a-name','a-metric','a-ops','a-window','a-threshold','a-min-calls','a-webhook'].map(i => document.getElementById(i).value).join('|')"); got != "chat errors|error_rate|chat|300|0.3|5|"+hook.ID {
		t.Errorf("edit form = %q", got)
	}
	p.do(chromedp.Click(chromedp.CSS("#alert-test-button")))
	p.waitFor("document.querySelector('#alert-test').dataset.state === 'firing'")
	if got := eval[string](p, "document.querySelector('#alert-test').textContent"); !strings.Contains(got, "error rate 50 % over 10 calls in the last 5 min. It would fire (> 30 %)") {
		t.Errorf("test result = %q", got)
	}
	if href := eval[string](p, "document.querySelector('#alert-test a').getAttribute('href')"); !strings.HasPrefix(href, "/acme/app/calls?") || !strings.Contains(href, "status=error") {
		t.Errorf("the window's calls link to %q", href)
	}
	p.do(chromedp.SetValue(chromedp.CSS("#a-window"), "30"), chromedp.Click(chromedp.CSS("#alert-test-button")))
	p.waitFor("document.querySelector('#alert-error').textContent.startsWith('Window (seconds): condition.window_seconds:')")
	if got := p.texts("#alert-test"); len(got) != 1 || got[0] != "" {
		t.Errorf("a refused test still shows a result: %q", got)
	}
	p.do(chromedp.SetValue(chromedp.CSS("#a-window"), "300"), chromedp.SetValue(chromedp.CSS("#a-threshold"), "0.9"),
		chromedp.Click(chromedp.CSS("#alert-test-button")))
	p.waitFor("document.querySelector('#alert-test').dataset.state === 'ok'")
	if got := eval[string](p, "document.querySelector('#alert-test').textContent"); !strings.Contains(got, "It would not fire (> 90 %)") {
		t.Errorf("test result = %q", got)
	}
	p.shot("alerts-test")
	p.do(chromedp.Click(chromedp.CSS("form.alert-form button[type=submit]")))
	p.waitFor("document.querySelector('table.alerts td.condition')?.textContent.includes('> 90 %')")
	p.waitFor("document.querySelectorAll('table.transitions tbody tr').length === 2")
	if got := p.texts("table.transitions tbody td:nth-child(3)"); strings.Join(got, ",") != "ok,firing" {
		t.Errorf("history states, newest first = %v, want ok, firing", got)
	}
	if st := eval[string](p, "document.querySelector('table.alerts .badge').dataset.state"); st != "ok" {
		t.Errorf("state after raising the threshold = %q, want ok", st)
	}
	checkNames(t, p)
	p.shot("alerts-history")

	// Disable from the list.
	p.do(chromedp.Click(chromedp.CSS(`table.alerts button[data-key="toggle:` + id + `"]`)))
	p.waitFor("document.querySelector('table.alerts tbody td:nth-child(8)')?.textContent === 'no'")
	if got := p.texts(`table.alerts button[data-key="toggle:` + id + `"]`); len(got) != 1 || got[0] != "Enable" {
		t.Errorf("toggle button = %v, want Enable", got)
	}
	if as := listAlerts(t, w); len(as) != 1 || as[0].Enabled {
		t.Errorf("alerts after disabling = %+v, want one, disabled", as)
	}
	tabTo(t, p, "table.alerts button", 40)
}

// listedAlert is an automation as /automations/list shows it.
type listedAlert struct {
	ID      string
	Enabled bool
}

func listAlerts(t *testing.T, w weft) []listedAlert {
	t.Helper()
	var out struct{ Automations []listedAlert }
	if err := json.Unmarshal(w.send(t, http.MethodPost, "/automations/list", w.admin, map[string]any{"project_id": "acme/app"}), &out); err != nil {
		t.Fatal(err)
	}
	return out.Automations
}
