package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// benchQuery loads o.calls calls, then times the three reads the design
// sets targets for: the first page of stream_query with an op filter,
// query_stats, and call/read.
func benchQuery(ctx context.Context, t *target, o options) error {
	r, err := load(ctx, t, o, o.project)
	if err != nil {
		return err
	}
	fmt.Printf("loaded %d calls in %v (%.0f calls/s)\n", o.calls, r.elapsed.Round(time.Millisecond), float64(o.calls)/r.elapsed.Seconds())
	op := "weave:///" + o.project + "/op/chat:v1"
	reads := []struct {
		name, path string
		body       map[string]any
	}{
		{"stream_query first page (op filter, limit 100)", "/calls/stream_query",
			map[string]any{"project_id": o.project, "filter": map[string]any{"op_names": []string{op}}, "limit": 100, "sort_by": []map[string]string{{"field": "started_at", "direction": "desc"}}}},
		{"query_stats (whole project)", "/calls/query_stats", map[string]any{"project_id": o.project}},
		{"query_stats (op filter)", "/calls/query_stats", map[string]any{"project_id": o.project, "filter": map[string]any{"op_names": []string{op}}}},
		{"call/read", "/call/read", map[string]any{"project_id": o.project, "id": fmt.Sprintf("c%08d-%05d", o.calls/o.batch/2, 7)}},
		{fmt.Sprintf("whole trace by id (%d calls)", o.batch), "/calls/stream_query",
			map[string]any{"project_id": o.project, "filter": map[string]any{"trace_ids": []string{fmt.Sprintf("t%08d", o.calls/o.batch/3)}}}},
	}
	client := &http.Client{Timeout: time.Minute}
	for _, r := range reads {
		body, _ := json.Marshal(r.body)
		var lats []time.Duration
		for range o.queries {
			d, n, err := timedPost(ctx, client, t, r.path, body)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%s returned an empty body", r.name)
			}
			lats = append(lats, d)
		}
		fmt.Printf("  %-48s p50 %v  p99 %v\n", r.name, pct(lats, 50), pct(lats, 99))
	}
	fmt.Printf("  peak RSS %s\n", t.peakRSS())
	return nil
}

func timedPost(ctx context.Context, c *http.Client, t *target, path string, body []byte) (time.Duration, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	begin := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("POST %s: %d", path, resp.StatusCode)
	}
	return time.Since(begin), n, err
}
