package webui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/sync/errgroup"

	"github.com/weftdev/weft/internal/browsertest"
)

// traceSize is how many calls each benchmark trace holds: a root and its
// children.
const traceSize = 1000

// BenchmarkBrowser measures, in headless Chromium, the time from
// navigation to a usable calls page (its first rows shown), to a page of
// all calls half way into the project (by offset, and by the cursor the
// Older button puts in the address), and to an opened trace of traceSize
// calls (the whole tree drawn), on a project of WEFT_UI_BENCH_CALLS calls
// (default 1,000,000). See the README.
func BenchmarkBrowser(b *testing.B) {
	total := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("WEFT_UI_BENCH_CALLS")); err == nil && v >= traceSize {
		total = v
	}
	w := startWeft(b)
	began := time.Now()
	loadTraces(b, w, total/traceSize)
	b.Logf("loaded %d calls in %v", total, time.Since(began).Round(time.Millisecond))
	if got := w.count(b, "acme/bench"); got != int64(total) {
		b.Fatalf("the project holds %d calls, want %d", got, total)
	}
	p := page{t: b, ctx: browsertest.New(b, 30*time.Minute), url: w.url}
	p.open("/signin")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("localStorage.setItem('weft.apiKey', %q)", w.key)))
	var callsMS, deepMS, cursorMS, traceMS float64
	half, cursor := total/traceSize/2, midCursor(b, w, total)
	full := "document.querySelectorAll('table.calls tbody tr').length === 50"
	n := 0
	for b.Loop() {
		callsMS += p.timeTo("/acme/bench/calls", fmt.Sprintf("document.querySelectorAll('table.calls tbody tr').length === %d", min(50, total/traceSize)))
		deepMS += p.timeTo(fmt.Sprintf("/acme/bench/calls?all=1&page=%d", total/2/50), full)
		cursorMS += p.timeTo(fmt.Sprintf("/acme/bench/calls?all=1&page=%d&after=%s", total/2/50, url.QueryEscape(cursor)),
			full+fmt.Sprintf(" && document.querySelector('table.calls a.op').pathname.endsWith('/r%08d-0999')", half-1))
		traceMS += p.timeTo(fmt.Sprintf("/acme/bench/calls/r%08d-0000", total/traceSize/2), fmt.Sprintf("document.querySelectorAll('.tree-row').length === %d", traceSize))
		n++
	}
	b.ReportMetric(callsMS/float64(n), "ms/calls-page")
	b.ReportMetric(deepMS/float64(n), "ms/deep-page")
	b.ReportMetric(cursorMS/float64(n), "ms/deep-page-cursor")
	b.ReportMetric(traceMS/float64(n), "ms/trace-page")
}

// midCursor is the cursor of the last call of the first half of the
// project in the default order (the root of the middle trace, which
// starts first in it), as the Older button would put it in the address.
func midCursor(b *testing.B, w weft, total int) string {
	var read struct {
		Call struct {
			ID        string `json:"id"`
			StartedAt string `json:"started_at"`
		} `json:"call"`
	}
	decode(b, w.post(b, "/call/read", map[string]any{"project_id": "acme/bench", "id": fmt.Sprintf("r%08d-0000", total/traceSize/2)}), &read)
	return read.Call.StartedAt + "|" + read.Call.ID
}

// timeTo opens path and returns the milliseconds from navigation start
// until cond holds, as the page's own clock measures them.
func (p page) timeTo(path, cond string) float64 {
	p.t.Helper()
	p.open(path)
	ms, err := chromedp.Run(p.ctx, chromedp.Poll[float64]("("+cond+") && performance.now()",
		chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(time.Minute)))
	if err != nil {
		p.t.Fatalf("%s: %v", path, err)
	}
	return ms
}

// loadTraces writes traces of traceSize calls each through
// /call/upsert_batch, one trace per request, two requests at a time.
func loadTraces(b *testing.B, w weft, traces int) {
	now := time.Now().Add(-time.Hour)
	var g errgroup.Group
	g.SetLimit(2)
	for i := range traces {
		g.Go(func() error { return postTrace(w, i, now.Add(-time.Duration(traces-i)*time.Minute)) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

func postTrace(w weft, i int, start time.Time) error {
	batch := make([]map[string]any, 0, 2*traceSize)
	trace := fmt.Sprintf("t%08d", i)
	for j := range traceSize {
		id, parent, op := fmt.Sprintf("r%08d-%04d", i, j), fmt.Sprintf("r%08d-0000", i), "step"
		if j == 0 {
			parent, op = "", "chat"
		}
		s := map[string]any{"project_id": "acme/bench", "id": id, "trace_id": trace, "op_name": op,
			"started_at": start.Add(time.Duration(j) * time.Millisecond), "attributes": map[string]any{},
			"inputs": map[string]any{"i": i, "j": j, "text": fmt.Sprintf("question %d of trace %d", j, i)}}
		if parent != "" {
			s["parent_id"] = parent
		}
		e := map[string]any{"project_id": "acme/bench", "id": id, "ended_at": start.Add(time.Duration(j+5) * time.Millisecond),
			"output": fmt.Sprintf("answer %d", j), "summary": map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 10 + j%7, "completion_tokens": 3}}}}
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": s}},
			map[string]any{"mode": "end", "req": map[string]any{"end": e}})
	}
	body, err := json.Marshal(map[string]any{"batch": batch})
	if err != nil {
		return err
	}
	return postRetrying(w, "/call/upsert_batch", body)
}

// postRetrying posts body, waiting and trying again while weft answers
// 429 (its store is catching up).
func postRetrying(w weft, path string, body []byte) error {
	for {
		req, err := http.NewRequest(http.MethodPost, w.url+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.SetBasicAuth("api", w.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusTooManyRequests:
			time.Sleep(200 * time.Millisecond)
		default:
			return fmt.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
}
