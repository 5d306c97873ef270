package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"
)

// benchCalls writes o.calls calls through /call/upsert_batch from
// o.workers clients and prints throughput, latency and peak RSS.
func benchCalls(ctx context.Context, t *target, o options) error {
	r, err := load(ctx, t, o, o.project)
	if err != nil {
		return err
	}
	fmt.Printf("upsert_batch: %d calls in %d-call batches, %d workers, ~%d B payload, offered %s\n",
		o.calls, o.batch, o.workers, o.payload, offered(o.rate, "calls"))
	r.print("calls")
	fmt.Printf("  peak RSS    %s\n", t.peakRSS())
	t.stored, t.unit = o.calls, "call"
	sample := batchBody(rand.New(rand.NewPCG(0, 7)), newTextPool(1<<16, max(o.payload-60, 0)/2), o.project, 0, max(o.batch, 1))
	t.wireBytes = float64(len(sample)) / float64(max(o.batch, 1))
	if o.visibleURL == "" {
		return nil
	}
	return waitVisible(ctx, t, o, r.elapsed)
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

// load sends the calls through /call/upsert_batch, each call a start and
// an end in the same request, with distinct input and output text.
func load(ctx context.Context, t *target, o options, project string) (loadRun, error) {
	client := &http.Client{Timeout: 2 * time.Minute}
	pool := newTextPool(1<<16, max(o.payload-60, 0)/2)
	return drive(ctx, o, func(ctx context.Context, i, n int) (int, error) {
		body := batchBody(rand.New(rand.NewPCG(uint64(i), 7)), pool, project, i, n)
		return postRetrying(ctx, client, t, "/call/upsert_batch", body)
	})
}

var ops = []string{"chat", "embed", "retrieve", "rerank", "tool"}

// batchBody writes an upsert_batch body directly into bytes: the load
// generator shares the machine with the server, so it must stay cheap.
func batchBody(rng *rand.Rand, pool textPool, project string, b, n int) []byte {
	base := time.Now().UTC()
	out := make([]byte, 0, n*(2*len(pool[0])+700))
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
			project, id, b, project, op, started.Format(time.RFC3339Nano), pool.pick(rng), i)
		out = fmt.Appendf(out, `{"mode":"end","req":{"end":{"project_id":%q,"id":%q,"ended_at":%q,"output":{"text":%q},`+
			`"summary":{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":20,"requests":1}}}}}}`,
			project, id, started.Add(42*time.Millisecond).Format(time.RFC3339Nano), pool.pick(rng))
	}
	return append(out, "]}"...)
}

// postRetrying posts body, retrying 429/503 as SDKs do, and reports how
// many refusals it went through.
func postRetrying(ctx context.Context, c *http.Client, t *target, path string, body []byte) (int, error) {
	for refusals := 0; ; refusals++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url+path, bytes.NewReader(body))
		if err != nil {
			return refusals, err
		}
		req.Header.Set("Authorization", "Bearer "+t.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return refusals, err
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return refusals, nil
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return refusals, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, out)
	}
}

// pct is the p-th percentile of unsorted latencies.
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return pctSorted(s, p*10)
}
