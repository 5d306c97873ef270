package webui_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ingestMany writes n root calls in acme/many, two per started_at
// second, so pages end inside a tie: in the default order (newest first,
// then by id) they read k{n-1} … k000.
func ingestMany(t testing.TB, w weft, n int) {
	at := time.Now().Add(-time.Hour).Truncate(time.Second).Add(123456 * time.Microsecond)
	var batch []map[string]any
	for i := range n {
		ops := callOps(fmt.Sprintf("k%03d", i), fmt.Sprintf("tk%03d", i), "", "many", at.Add(time.Duration(i/2)*time.Second),
			time.Duration(n-i)*time.Millisecond, map[string]any{}, map[string]any{}, "")
		for _, op := range ops {
			for _, part := range op["req"].(map[string]any) {
				part.(map[string]any)["project_id"] = "acme/many"
			}
		}
		batch = append(batch, ops...)
	}
	w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
}

// pagingByCursor walks the default order page by page with the buttons:
// every call once, in order, each page's address holding the cursor; back
// again; and sorting by latency pages by offset.
func pagingByCursor(t *testing.T, p page, w weft) {
	const n = 120
	ingestMany(t, w, n)
	p.open("/acme/many/calls")
	var seen, pages []string
	for i := range 3 {
		p.waitFor(fmt.Sprintf("document.querySelector('.pager span')?.textContent === 'Page %d' && %s > 0", i+1, rows))
		ids := eval[[]string](p, "[...document.querySelectorAll('table.calls a.op')].map(a => a.pathname.split('/').pop())")
		seen = append(seen, ids...)
		pages = append(pages, strings.Join(ids, ","))
		if i < 2 {
			p.do(chromedp.Click(chromedp.CSS(".pager [data-next]")))
		}
	}
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("k%03d", n-1-i)
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("three pages = %v\nwant %v", seen, want)
	}
	if addr := eval[string](p, "location.search"); !strings.Contains(addr, "after=") || !strings.Contains(addr, "page=2") {
		t.Errorf("third page's address = %q, want a cursor", addr)
	}
	if eval[bool](p, "document.querySelector('.pager [data-next]').disabled") != true {
		t.Error("the last page offers another")
	}
	p.do(chromedp.Click(chromedp.CSS(".pager button:first-child")))
	p.waitFor("document.querySelector('.pager span')?.textContent === 'Page 2' && location.search.includes('before=')")
	p.waitFor(rows + " === 50")
	if back := strings.Join(eval[[]string](p, "[...document.querySelectorAll('table.calls a.op')].map(a => a.pathname.split('/').pop())"), ","); back != pages[1] {
		t.Errorf("page 2 again = %s\nwant %s", back, pages[1])
	}
	p.open("/acme/many/calls?sort=latency&dir=asc")
	p.waitFor(rows + " === 50")
	p.do(chromedp.Click(chromedp.CSS(".pager [data-next]")))
	p.waitFor("location.search.includes('page=1') && document.querySelector('.pager span')?.textContent === 'Page 2'")
	if addr := eval[string](p, "location.search"); strings.Contains(addr, "after=") {
		t.Errorf("latency sort pages by %q, want an offset", addr)
	}
	p.waitFor(rows + " === 50 && document.querySelector('table.calls a.op').pathname.endsWith('/k069')")
}
