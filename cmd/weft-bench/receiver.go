package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// benchReceiver is the local webhook endpoint: it notes when each alias's
// delivery first arrives and whether its signature verified.
type benchReceiver struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	arrived map[int]time.Time
	bad     int
}

func startBenchReceiver() (*benchReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &benchReceiver{url: "http://" + l.Addr().String(), arrived: map[int]time.Time{}}
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(l) }()
	return rc, nil
}

func (rc *benchReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, _ := io.ReadAll(r.Body)
	var p struct{ Alias string }
	_ = json.Unmarshal(body, &p)
	n, err := strconv.Atoi(strings.TrimPrefix(p.Alias, "a"))
	rc.mu.Lock()
	if !verifyBench(r.Header, body) {
		rc.bad++
	}
	if _, seen := rc.arrived[n]; err == nil && !seen {
		rc.arrived[n] = now
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// wait returns the arrival times of deliveries 0..n-1 and how many
// signatures failed, once all arrived.
func (rc *benchReceiver) wait(ctx context.Context, n int, limit time.Duration) ([]time.Time, int, error) {
	deadline := time.Now().Add(limit)
	for {
		rc.mu.Lock()
		got := len(rc.arrived)
		rc.mu.Unlock()
		if got >= n {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, 0, fmt.Errorf("%d of %d deliveries arrived within %v", got, n, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]time.Time, n)
	for i := range out {
		out[i] = rc.arrived[i]
	}
	return out, rc.bad, nil
}

func (rc *benchReceiver) close() { _ = rc.srv.Close() }
