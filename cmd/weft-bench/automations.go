package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/weftdev/weft/automations/signing"
)

// automationsServeArgs lets the started server deliver to the local
// receiver, with quick retries so the dead receiver's backlog churns.
func automationsServeArgs() ([]string, error) {
	dir, err := os.MkdirTemp("", "weft-bench-config")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "weft.yaml")
	cfg := "automations:\n  allowed_networks: [127.0.0.0/8]\n  retry: {initial_interval: 1s, max_interval: 30s, max_elapsed: 72h}\n"
	return []string{"--config", path}, os.WriteFile(path, []byte(cfg), 0o600)
}

// benchAutomations measures event-to-delivery latency and deliveries/s
// to a local receiver (alias writes of o.batch aliases each, from
// o.workers clients, o.calls deliveries), then leaves o.pending
// deliveries pending against a receiver that refuses connections and
// reports the server's memory while it retries them.
func benchAutomations(ctx context.Context, t *target, o options) error {
	rc, err := startBenchReceiver()
	if err != nil {
		return err
	}
	defer rc.close()
	api := &benchAPI{t: t, client: &http.Client{Timeout: time.Minute}}
	if err := api.setup(ctx, o.project, rc.url); err != nil {
		return err
	}
	fmt.Printf("automations: %d deliveries, %d aliases per write, %d clients\n", o.calls, o.batch, o.workers)
	if err := liveRun(ctx, api, rc, o); err != nil {
		return err
	}
	fmt.Printf("  peak RSS    %s\n", t.peakRSS())
	if o.pending == 0 {
		return nil
	}
	return deadRun(ctx, api, t, o)
}

// liveRun writes the aliases and waits for every delivery.
func liveRun(ctx context.Context, api *benchAPI, rc *benchReceiver, o options) error {
	sent := make([]time.Time, o.calls)
	begin := time.Now()
	err := inParallel(o.workers, o.calls/o.batch, func(req int) error {
		aliases := make([]string, o.batch)
		for i := range aliases {
			aliases[i] = fmt.Sprintf("a%d", req*o.batch+i)
			sent[req*o.batch+i] = time.Now()
		}
		return api.alias(ctx, o.project, aliases)
	})
	if err != nil {
		return err
	}
	acked := time.Since(begin)
	arrivals, bad, err := rc.wait(ctx, o.calls/o.batch*o.batch, 5*time.Minute)
	if err != nil {
		return err
	}
	var lats []time.Duration
	last := begin
	for i, at := range arrivals {
		lats = append(lats, at.Sub(sent[i]))
		last = maxTime(last, at)
	}
	fmt.Printf("  writes acknowledged in %v\n", acked.Round(time.Millisecond))
	fmt.Printf("  deliveries  %.0f/s (first write to last delivery %v)\n", float64(len(arrivals))/last.Sub(begin).Seconds(), last.Sub(begin).Round(time.Millisecond))
	fmt.Printf("  event-to-delivery latency p50 %v  p99 %v  max %v\n", pct(lats, 50), pct(lats, 99), pct(lats, 100))
	fmt.Printf("  signatures that did not verify: %d of %d\n", bad, len(arrivals))
	return nil
}

// deadRun piles deliveries up against a dead receiver and watches memory.
func deadRun(ctx context.Context, api *benchAPI, t *target, o options) error {
	dead, err := deadAddr()
	if err != nil {
		return err
	}
	project := o.project + "-dead"
	if err := api.setup(ctx, project, "http://"+dead); err != nil {
		return err
	}
	fmt.Printf("dead receiver: %d deliveries pending\n", o.pending)
	const per = 100
	begin := time.Now()
	if err := inParallel(o.workers, o.pending/per, func(req int) error {
		aliases := make([]string, per)
		for i := range aliases {
			aliases[i] = fmt.Sprintf("d%d", req*per+i)
		}
		return api.alias(ctx, project, aliases)
	}); err != nil {
		return err
	}
	fmt.Printf("  events written in %v; RSS %s\n", time.Since(begin).Round(time.Millisecond), t.rss())
	deadline := time.Now().Add(10 * time.Minute)
	for pending := 0.0; pending < float64(o.pending/per*per); {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %.0f deliveries pending after 10 minutes", pending)
		}
		time.Sleep(time.Second)
		if pending, err = api.metric(ctx, "weft_automations_deliveries_pending"); err != nil {
			return err
		}
	}
	fmt.Printf("  all pending after %v; RSS %s\n", time.Since(begin).Round(time.Millisecond), t.rss())
	time.Sleep(30 * time.Second) // retries keep coming due
	retries, _ := api.metric(ctx, "weft_automations_delivery_retries")
	heap, _ := api.metric(ctx, "go_memstats_heap_inuse_bytes")
	fmt.Printf("  after 30s more of retries (%.0f failed attempts so far): RSS %s, peak RSS %s, Go heap in use %.0f MiB (the rest is the store's buffer pool, duckdb_memory_mb)\n",
		retries, t.rss(), t.peakRSS(), heap/(1<<20))
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// inParallel runs fn(0..n-1) on workers goroutines; the first error wins.
func inParallel(workers, n int, fn func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
	for i := 0; i < n && err == nil; i++ {
		select {
		case next <- i:
		case err = <-errs:
		}
	}
	close(next)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return err
}

// deadAddr is a loopback address that refuses connections.
func deadAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// benchAPI drives the automations endpoints.
type benchAPI struct {
	t      *target
	client *http.Client
}

func (a *benchAPI) do(ctx context.Context, method, path string, body, out any) error {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, a.t.url+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.t.key)
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// setup makes a secret, a webhook to url and an automation firing for
// every alias in project, and publishes the object aliases go on.
func (a *benchAPI) setup(ctx context.Context, project, url string) error {
	entity := project[:bytes.IndexByte([]byte(project), '/')]
	var hook struct{ ID string }
	steps := []struct {
		path string
		body map[string]any
		out  any
	}{
		{"/secrets/create", map[string]any{"entity": entity, "name": "BENCH_SIGN", "value": "bench-secret"}, nil},
		{"/webhooks/create", map[string]any{"entity": entity, "name": "bench " + project, "url": url, "secret": "BENCH_SIGN"}, &hook},
		{"/automations/create", nil, nil},
		{"/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": "model", "val": map[string]any{"v": 1}}}, nil},
	}
	for _, s := range steps {
		if s.path == "/automations/create" {
			s.body = map[string]any{"project_id": project, "name": "every alias", "enabled": true, "scope": map[string]any{"type": "project"},
				"event": "ADD_ARTIFACT_ALIAS", "alias_regex": ".", "webhook_id": hook.ID, "payload": `{"alias":"${alias}","event":"${event_id}"}`}
		}
		if err := a.do(ctx, http.MethodPost, s.path, s.body, s.out); err != nil {
			return err
		}
	}
	return nil
}

func (a *benchAPI) alias(ctx context.Context, project string, aliases []string) error {
	return a.do(ctx, http.MethodPut, "/objs/model/aliases", map[string]any{"project_id": project, "digest": "latest", "aliases": aliases}, nil)
}

// metric reads one unlabelled value from /metrics.
func (a *benchAPI) metric(ctx context.Context, name string) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.t.url+"/metrics", nil)
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range bytes.Split(body, []byte("\n")) {
		var v float64
		if rest, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			_, err := fmt.Sscan(string(rest), &v)
			return v, err
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}

// verifyBench checks a delivery's signature with the bench's secret.
func verifyBench(h http.Header, body []byte) bool {
	return signing.VerifyService("bench-secret", body, h.Get(signing.HeaderServiceSignature)) == nil
}
