package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// benchCalls writes o.calls calls through /call/upsert_batch from
// o.workers clients and prints throughput, latency and peak RSS.
func benchCalls(ctx context.Context, t *target, o options) error {
	elapsed, lat, err := load(ctx, t, o, o.project)
	if err != nil {
		return err
	}
	fmt.Printf("upsert_batch: %d calls in %d-call batches, %d workers, ~%d B payload\n", o.calls, o.batch, o.workers, o.payload)
	fmt.Printf("  throughput  %.0f calls/s\n", float64(o.calls)/elapsed.Seconds())
	fmt.Printf("  latency     p50 %v  p99 %v  (per request)\n", pct(lat, 50), pct(lat, 99))
	fmt.Printf("  peak RSS    %s\n", t.peakRSS())
	if o.visibleURL == "" {
		return nil
	}
	return waitVisible(ctx, t, o, elapsed)
}

// waitVisible polls the query role until every call is readable, then
// prints the end-to-end figures: the time from the first write until the
// last call is served, and the lag after the last acknowledgement.
func waitVisible(ctx context.Context, t *target, o options, loadTime time.Duration) error {
	q := &target{url: strings.TrimRight(o.visibleURL, "/"), key: t.key}
	body, _ := json.Marshal(map[string]any{"project_id": o.project})
	client := &http.Client{Timeout: time.Minute}
	ackedAt := time.Now()
	for {
		var stats struct {
			Count int `json:"count"`
		}
		if err := postJSON(ctx, client, q, "/calls/query_stats", body, &stats); err != nil {
			return err
		}
		if stats.Count >= o.calls {
			break
		}
		if time.Since(ackedAt) > 10*time.Minute {
			return fmt.Errorf("only %d of %d calls visible after 10 minutes", stats.Count, o.calls)
		}
		time.Sleep(50 * time.Millisecond)
	}
	lag := time.Since(ackedAt)
	total := loadTime + lag
	fmt.Printf("end to end (ingest -> query role): all %d calls visible %v after the last ack\n", o.calls, lag.Round(time.Millisecond))
	fmt.Printf("  end-to-end throughput %.0f calls/s\n", float64(o.calls)/total.Seconds())
	return nil
}

func postJSON(ctx context.Context, c *http.Client, t *target, path string, body []byte, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, out)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// load sends the calls and returns the wall time and request latencies.
func load(ctx context.Context, t *target, o options, project string) (time.Duration, []time.Duration, error) {
	batches := (o.calls + o.batch - 1) / o.batch
	var next atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	var firstErr error
	client := &http.Client{Timeout: 2 * time.Minute}
	pad := strings.Repeat("x", max(o.payload-60, 0)/2)
	begin := time.Now()
	var wg sync.WaitGroup
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				b := int(next.Add(1)) - 1
				if b >= batches {
					return
				}
				n := min(o.batch, o.calls-b*o.batch)
				body := batchBody(project, b, n, pad)
				d, err := postRetrying(ctx, client, t, "/call/upsert_batch", body)
				mu.Lock()
				lats = append(lats, d)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(begin), lats, firstErr
}

var ops = []string{"chat", "embed", "retrieve", "rerank", "tool"}

// batchBody writes an upsert_batch body directly into bytes: the load
// generator shares the machine with the server, so it must stay cheap.
func batchBody(project string, b, n int, pad string) []byte {
	base := time.Now().UTC()
	out := make([]byte, 0, n*(2*len(pad)+700))
	out = append(out, `{"batch":[`...)
	for i := range n {
		id := fmt.Sprintf("c%08d-%05d", b, i)
		op := ops[(b+i)%len(ops)]
		started := base.Add(time.Duration(i) * time.Microsecond)
		if i > 0 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, `{"mode":"start","req":{"start":{"project_id":%q,"id":%q,"trace_id":"t%08d",`+
			`"op_name":"weave:///%s/op/%s:v1","started_at":%q,"attributes":{"env":"bench"},"inputs":{"prompt":%q,"n":%d}}}},`,
			project, id, b, project, op, started.Format(time.RFC3339Nano), pad, i)
		out = fmt.Appendf(out, `{"mode":"end","req":{"end":{"project_id":%q,"id":%q,"ended_at":%q,"output":{"text":%q},`+
			`"summary":{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":20,"requests":1}}}}}}`,
			project, id, started.Add(42*time.Millisecond).Format(time.RFC3339Nano), pad)
	}
	return append(out, "]}"...)
}

// postRetrying posts body, retrying 429/503 after Retry-After as SDKs do.
func postRetrying(ctx context.Context, c *http.Client, t *target, path string, body []byte) (time.Duration, error) {
	begin := time.Now()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url+path, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+t.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return time.Since(begin), nil
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return 0, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, out)
	}
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}
