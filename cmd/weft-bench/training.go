package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/weftdev/weft/training/protocol"
	"github.com/weftdev/weft/training/trainer"
)

// benchBaseModel is the trainable model of the bench's config.
const benchBaseModel = "bench/base"

// trainingServeArgs is a config with a trainable model and long leases.
func trainingServeArgs() ([]string, error) {
	dir, err := os.MkdirTemp("", "weft-bench-training")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "weft.yaml")
	cfg := "log_level: warn\ntraining:\n  base_models: [" + benchBaseModel + "]\n  lease_ttl: 10m\n"
	return []string{"--config", path}, os.WriteFile(path, []byte(cfg), 0o600)
}

// benchTraining measures the training queue: leases with --jobs queued
// (the queue kept that deep), then --calls events appended by --workers
// workers in batches of --batch, then the same events paged back.
func benchTraining(ctx context.Context, t *target, o options) error {
	api := &trainingAPI{t: t, c: &http.Client{Timeout: time.Minute}}
	model, err := api.model(ctx)
	if err != nil {
		return err
	}
	extra := max(o.workers, 200)
	start := time.Now()
	for range o.jobs + extra {
		if _, err := api.createJob(ctx, model); err != nil {
			return err
		}
	}
	el := time.Since(start)
	fmt.Printf("training: %d jobs created in %s (%.0f jobs/s)\n", o.jobs+extra, el.Round(time.Millisecond), float64(o.jobs+extra)/el.Seconds())
	w := trainer.NewClient(t.url, t.key, api.c)
	leases, err := benchLeases(ctx, w, extra, o.jobs)
	if err != nil {
		return err
	}
	if err := benchAppend(ctx, w, leases[:o.workers], o); err != nil {
		return err
	}
	return benchPaging(ctx, api, leases[:o.workers])
}

// benchLeases leases n jobs one at a time, each with at least queued
// more jobs behind it, and reports the latency.
func benchLeases(ctx context.Context, w *trainer.Client, n, queued int) ([]*protocol.Lease, error) {
	var lats []time.Duration
	var out []*protocol.Lease
	for range n {
		t0 := time.Now()
		l, err := w.Lease(ctx, "bench", 0)
		if err != nil || l == nil {
			return nil, fmt.Errorf("lease: %v (got %v)", err, l)
		}
		lats = append(lats, time.Since(t0))
		out = append(out, l)
	}
	fmt.Printf("  lease with >= %d jobs queued: p50 %v  p99 %v  max %v  (%d leases, one client)\n",
		queued, pct(lats, 50), pct(lats, 99), pct(lats, 100), n)
	return out, nil
}

// benchAppend has one worker per lease append gradient_step events.
func benchAppend(ctx context.Context, w *trainer.Client, leases []*protocol.Lease, o options) error {
	per := o.calls / len(leases) / o.batch
	var mu sync.Mutex
	var lats []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for _, l := range leases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range per {
				evs := make([]protocol.Event, o.batch)
				for i := range evs {
					evs[i] = protocol.Event{Type: "gradient_step", Data: json.RawMessage(fmt.Sprintf(`{"loss":%d.5,"grad_norm":1.25,"learning_rate":1e-5}`, b*o.batch+i))}
				}
				t0 := time.Now()
				err := w.Events(ctx, l.Job.ID, l.LeaseID, int64(b*o.batch+1), evs)
				mu.Lock()
				lats = append(lats, time.Since(t0))
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	total := per * o.batch * len(leases)
	fmt.Printf("  events appended: %d in %s = %.0f events/s (%d workers, %d per request; request p50 %v p99 %v)\n",
		total, el.Round(time.Millisecond), float64(total)/el.Seconds(), len(leases), o.batch, pct(lats, 50), pct(lats, 99))
	return firstErr
}

// benchPaging reads every job's events back, 100 a page, as clients page.
func benchPaging(ctx context.Context, api *trainingAPI, leases []*protocol.Lease) error {
	var wg sync.WaitGroup
	counts := make([]int, len(leases))
	errs := make([]error, len(leases))
	start := time.Now()
	for i, l := range leases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = api.pageAll(ctx, l.Job.ID)
		}()
	}
	wg.Wait()
	el := time.Since(start)
	total := 0
	for i := range counts {
		if errs[i] != nil {
			return errs[i]
		}
		total += counts[i]
	}
	fmt.Printf("  events paged: %d in %s = %.0f events/s (%d clients, 100 per page)\n", total, el.Round(time.Millisecond),
		float64(total)/el.Seconds(), len(leases))
	return nil
}

// trainingAPI is the client side of the training API.
type trainingAPI struct {
	t *target
	c *http.Client
}

func (a *trainingAPI) call(ctx context.Context, method, path string, body, v any) error {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body) // plain values
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.t.url+"/v1"+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.t.key)
	resp, err := a.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return json.Unmarshal(out, v)
}

func (a *trainingAPI) model(ctx context.Context) (string, error) {
	var m struct{ ID string }
	return m.ID, a.call(ctx, http.MethodPost, "/preview/models", map[string]any{"entity": "bench", "project": "training",
		"name": "bench-model", "base_model": benchBaseModel, "return_existing": true}, &m)
}

func (a *trainingAPI) createJob(ctx context.Context, model string) (string, error) {
	var j struct{ ID string }
	groups := []any{map[string]any{"trajectories": []any{map[string]any{"reward": 1,
		"messages_and_choices": []any{map[string]any{"role": "user", "content": "hi"}}}}}}
	return j.ID, a.call(ctx, http.MethodPost, "/preview/training-jobs", map[string]any{"model_id": model, "trajectory_groups": groups}, &j)
}

// pageAll pages through a job's events and counts them.
func (a *trainingAPI) pageAll(ctx context.Context, job string) (int, error) {
	n, after := 0, ""
	for {
		var page struct {
			Data    []json.RawMessage
			LastID  string `json:"last_id"`
			HasMore bool   `json:"has_more"`
		}
		if err := a.call(ctx, http.MethodGet, "/preview/training-jobs/"+job+"/events?limit=100&after="+after, nil, &page); err != nil {
			return n, err
		}
		n += len(page.Data)
		if !page.HasMore {
			return n, nil
		}
		after = page.LastID
	}
}
