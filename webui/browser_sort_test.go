package webui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ingestUsage writes four root calls in acme/usage an hour ago whose
// token and cost orders differ: lots of a model without a price, many
// cheap gpt-4o-mini tokens, fewer dear gpt-4o ones, and none.
func ingestUsage(t testing.TB, w weft) {
	at := time.Now().Add(-time.Hour)
	usage := func(model string, tokens int) map[string]any {
		return map[string]any{"usage": map[string]any{model: map[string]any{"prompt_tokens": tokens}}}
	}
	var batch []map[string]any
	for i, c := range []struct {
		id      string
		summary map[string]any
	}{
		{"u-unpriced", usage("in-house-llm", 1_000_000)},
		{"u-cheap", usage("gpt-4o-mini", 100_000)},
		{"u-dear", usage("gpt-4o", 10_000)},
		{"u-none", map[string]any{}},
	} {
		ops := callOps(c.id, "t"+c.id, "", "chat", at.Add(time.Duration(i)*time.Second), time.Second, map[string]any{}, c.summary, "")
		for _, op := range ops {
			for _, part := range op["req"].(map[string]any) {
				part.(map[string]any)["project_id"] = "acme/usage"
			}
		}
		batch = append(batch, ops...)
	}
	w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
}

const shownIDs = "[...document.querySelectorAll('table.calls a.op')].map(a => a.pathname.split('/').pop()).join(',')"

// sortByUsage sorts by the tokens and cost headers, which the store
// orders, and checks a project price reorders the cost sort.
func sortByUsage(t *testing.T, p page, w weft) {
	ingestUsage(t, w)
	p.open("/acme/usage/calls")
	p.waitFor(rows + " === 4")
	p.do(chromedp.Click(chromedp.CSS("table.calls th:nth-child(5) button")))
	wantOrder(t, p, "sort=tokens", "u-unpriced,u-cheap,u-dear,u-none")
	p.do(chromedp.Click(chromedp.CSS("table.calls th:nth-child(5) button")))
	wantOrder(t, p, "dir=asc", "u-dear,u-cheap,u-unpriced,u-none")
	p.do(chromedp.Click(chromedp.CSS("table.calls th:nth-child(6) button")))
	// gpt-4o 10,000 x $2.5e-6 = $0.025 over gpt-4o-mini 100,000 x $1.5e-7.
	wantOrder(t, p, "sort=cost", "u-dear,u-cheap,u-unpriced,u-none")
	if costs := p.texts("table.calls tbody td:nth-child(6)"); strings.Join(costs, ",") != "$0.03,$0.01,—,—" {
		t.Errorf("costs shown = %v", costs)
	}
	w.post(t, "/cost/create", map[string]any{"project_id": "acme/usage", "costs": map[string]any{"gpt-4o-mini": map[string]any{
		"prompt_token_cost": 1e-6, "completion_token_cost": 1e-6,
		"effective_date": time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)}}})
	p.open("/acme/usage/calls?sort=cost&dir=desc")
	wantOrder(t, p, "sort=cost", "u-cheap,u-dear,u-unpriced,u-none")
	if costs := p.texts("table.calls tbody td:nth-child(6)"); len(costs) != 4 || costs[0] != "$0.10" {
		t.Errorf("costs shown after the project price = %v, want $0.10 first", costs)
	}
	p.shot("calls-by-cost")
}

func wantOrder(t *testing.T, p page, addr, want string) {
	t.Helper()
	p.waitFor(fmt.Sprintf("location.search.includes(%q) && %s === %q", addr, shownIDs, want))
}
