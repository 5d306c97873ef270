package webui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// unnamedControls lists the page's inputs, selects and buttons without
// an accessible name: no aria-label, no aria-labelledby naming text, no
// label, and (buttons) no text of their own. A name must hold a letter or
// a digit: a symbol alone (◐, ▼) says nothing to a screen reader.
const unnamedControls = `[...document.querySelectorAll('input, select, button, textarea')].filter(el => {
  const text = (s) => /[\p{L}\p{N}]/u.test(s || '');
  if (el.type === 'hidden') return false;
  if (text(el.getAttribute('aria-label'))) return false;
  const by = el.getAttribute('aria-labelledby');
  if (by && by.split(/\s+/).some(id => text(document.getElementById(id)?.textContent))) return false;
  if (el.labels && [...el.labels].some(l => text(l.textContent))) return false;
  if (el.tagName === 'BUTTON' && text(el.textContent)) return false;
  if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type) && text(el.value)) return false;
  return true;
}).map(el => el.outerHTML.slice(0, 120))`

// checkNames fails for every control of the page shown without an
// accessible name.
func checkNames(t *testing.T, p page) {
	t.Helper()
	if bad := eval[[]string](p, unnamedControls); len(bad) > 0 {
		t.Errorf("%s: controls without an accessible name:\n%s", eval[string](p, "location.pathname"), strings.Join(bad, "\n"))
	}
}

// loaded waits until the page has replaced its loading text.
func (p page) loaded() {
	p.t.Helper()
	p.waitFor("!document.querySelector('main').textContent.startsWith('Loading') && document.querySelector('main').children.length > 0")
}

// tabTo presses Tab until the focused element matches sel, at most max
// times, and checks the focus can be seen.
func tabTo(t *testing.T, p page, sel string, max int) {
	t.Helper()
	for range max {
		p.do(chromedp.KeyEvent(kb.Tab))
		if eval[bool](p, fmt.Sprintf("document.activeElement.matches(%q)", sel)) {
			focusVisible(t, p)
			return
		}
	}
	t.Fatalf("%d presses of Tab never reached %s (focus is on %s)", max, sel, eval[string](p, "document.activeElement.outerHTML.slice(0, 120)"))
}

// focusVisible fails unless the focused element draws a focus ring.
func focusVisible(t *testing.T, p page) {
	t.Helper()
	const ring = `(() => { const el = document.activeElement, s = getComputedStyle(el);
	  return el.matches(':focus-visible') && s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1; })()`
	if !eval[bool](p, ring) {
		t.Errorf("no visible focus on %s", eval[string](p, "document.activeElement.outerHTML.slice(0, 120)"))
	}
}

// keyboardAndNames checks that every control of the main pages has an
// accessible name, and walks the main flow by keyboard alone: Tab to the
// op filter, type and Enter to filter, Tab to a call and Enter to open it.
func keyboardAndNames(t *testing.T, p page, _ weft) {
	for _, path := range []string{"/", "/acme/app/calls", "/acme/app/calls/child-llm", "/acme/app/charts", "/acme/app/threads",
		"/acme/app/threads/thread-1", "/acme/app/datasets", "/acme/app/objects/evals", "/acme/app/training", "/acme/app/models", "/acme/app/alerts", "/acme/app/monitors"} {
		p.open(path)
		p.loaded()
		checkNames(t, p)
	}
	p.open("/acme/app/calls")
	p.waitFor(rows + " > 0")
	tabTo(t, p, "#f-op", 40)
	p.do(chromedp.KeyEvent("chat"), chromedp.KeyEvent(kb.Enter))
	p.waitFor("location.search === '?op=chat' && " + rows + " === 2")
	tabTo(t, p, "table.calls a.op", 60)
	p.do(chromedp.KeyEvent(kb.Enter))
	p.waitFor("location.pathname === '/acme/app/calls/root-2' && document.querySelectorAll('.tree-row').length === 1")
}
