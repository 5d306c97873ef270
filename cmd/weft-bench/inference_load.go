package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// loadResult is one load's latencies (time to first token for streams,
// and to the end of the answer) and throughput.
type loadResult struct {
	ttft, total []time.Duration
	errors      int
	elapsed     time.Duration
}

func (r loadResult) rate() float64 { return float64(len(r.total)) / r.elapsed.Seconds() }

// runLoad keeps clients requests in flight for d, each client sending its
// next request when the last is answered, to each endpoint in turn: with
// two, both are measured over the same moments, so whatever else the
// machine does weighs on both alike. A short warm-up first opens the
// connections, so dialing is not measured. One result per endpoint.
func runLoad(ctx context.Context, client *http.Client, eps []endpoint, clients int, stream bool, d time.Duration) ([]loadResult, error) {
	pool := newTextPool(1000, 100)
	if _, err := drivePhase(ctx, client, eps, clients, stream, min(d/5, time.Second), pool); err != nil {
		return nil, err
	}
	return drivePhase(ctx, client, eps, clients, stream, d, pool)
}

func drivePhase(ctx context.Context, client *http.Client, eps []endpoint, clients int, stream bool, d time.Duration, pool textPool) ([]loadResult, error) {
	var mu sync.Mutex
	res := make([]loadResult, len(eps))
	var firstErr error
	begin := time.Now()
	deadline := begin.Add(d)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := w; ctx.Err() == nil && time.Now().Before(deadline); i++ {
				ep := eps[i%len(eps)]
				ttft, total, err := oneRequest(ctx, client, ep, chatBody(ep.model, pool.pick(rng), stream), stream)
				mu.Lock()
				res[i%len(eps)].add(ttft, total, err, stream)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := range res {
		res[i].elapsed = time.Since(begin)
		if len(res[i].total) == 0 {
			return nil, fmt.Errorf("%s: no request succeeded: %v", eps[i].name, firstErr)
		}
	}
	return res, ctx.Err()
}

func (r *loadResult) add(ttft, total time.Duration, err error, stream bool) {
	switch {
	case err != nil:
		r.errors++
	case stream:
		r.ttft = append(r.ttft, ttft)
		fallthrough
	default:
		r.total = append(r.total, total)
	}
}

func chatBody(model, prompt string, stream bool) []byte {
	b, _ := json.Marshal(map[string]any{"model": model, "stream": stream, "max_tokens": 64,
		"messages": []any{map[string]any{"role": "user", "content": prompt}}})
	return b
}

// oneRequest sends one chat request and reads the whole answer.
func oneRequest(ctx context.Context, client *http.Client, ep endpoint, body []byte, stream bool) (ttft, total time.Duration, err error) {
	start := time.Now()
	resp, err := post(ctx, client, ep, body)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if !stream {
		_, err = io.Copy(io.Discard, resp.Body)
		return 0, time.Since(start), err
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("stream ended early: %w", err)
		}
		if ttft == 0 && bytes.HasPrefix(line, []byte("data: ")) {
			ttft = time.Since(start)
		}
		if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			return ttft, time.Since(start), nil
		}
	}
}

func post(ctx context.Context, client *http.Client, ep endpoint, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range ep.headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %d: %s", ep.name, resp.StatusCode, msg)
	}
	return resp, nil
}

// benchOpenStreams opens n streams through weft that stay open (the
// upstream sends a chunk a second) and reports weft's resident memory
// per thousand of them.
func benchOpenStreams(ctx context.Context, t *target, up *upstreamtest.Server, n int) error {
	if n == 0 {
		return nil
	}
	_, gateway := endpoints(t, up)
	gateway.model = "bench-hold"
	before, err := residentKiB(t)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}}
	defer client.CloseIdleConnections()
	opened := make(chan error, n)
	for range n {
		go holdStream(sctx, client, gateway, opened)
	}
	for range n {
		if err := <-opened; err != nil {
			return fmt.Errorf("opening %d streams: %w", n, err)
		}
	}
	time.Sleep(2 * time.Second) // a few chunks flow on every stream
	with, err := residentKiB(t)
	if err != nil {
		return err
	}
	fmt.Printf("  RSS %0.f MiB idle, %0.f MiB with %d open streams: %.1f MiB per 1,000 open streams (upstream sees %d open)\n",
		float64(before)/1024, float64(with)/1024, n, float64(with-before)/1024*1000/float64(n), up.Open())
	cancel()
	return nil
}

// holdStream opens one stream, reports when its first event arrived, and
// reads it until ctx ends.
func holdStream(ctx context.Context, client *http.Client, ep endpoint, opened chan<- error) {
	resp, err := post(ctx, client, ep, chatBody(ep.model, "hold this stream open", true))
	if err != nil {
		opened <- err
		return
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadSlice('\n'); err != nil {
		opened <- err
		return
	}
	opened <- nil
	_, _ = io.Copy(io.Discard, br)
}

// residentKiB is the started server's resident memory now.
func residentKiB(t *target) (int64, error) {
	if t.cmd == nil {
		return 0, fmt.Errorf("RSS needs a server started with --weft")
	}
	body, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", t.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc status")
}
