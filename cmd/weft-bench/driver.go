package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sendOne sends request number i (of n records) and returns how many
// overload answers (429/503) it retried through.
type sendOne func(ctx context.Context, i, n int) (refusals int, err error)

// loadRun is the outcome of one load.
type loadRun struct {
	records  int
	elapsed  time.Duration
	lats     []time.Duration
	refusals int64
	// done[i] is when record-window i was fully acknowledged.
	windows []time.Duration
	window  int
}

// drive sends o.calls records in requests of o.batch from o.workers
// workers. With o.rate > 0 the load is open: request i is due at
// i*batch/rate after the start, and its latency counts from when it was
// due, so a server stall shows in the figures instead of slowing the
// generator down. Otherwise each worker sends as fast as it is answered.
func drive(ctx context.Context, o options, send sendOne) (loadRun, error) {
	requests := (o.calls + o.batch - 1) / o.batch
	window := max(o.window, o.batch)
	r := loadRun{records: o.calls, window: window, windows: make([]time.Duration, (o.calls+window-1)/window)}
	var next atomic.Int64
	var acked atomic.Int64
	var mu sync.Mutex
	var firstErr error
	begin := time.Now()
	var wg sync.WaitGroup
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= requests {
					return
				}
				due := time.Now()
				if o.rate > 0 {
					due = begin.Add(time.Duration(float64(i*o.batch) / float64(o.rate) * float64(time.Second)))
					time.Sleep(time.Until(due))
				}
				n := min(o.batch, o.calls-i*o.batch)
				refused, err := send(ctx, i, n)
				lat := time.Since(due)
				total := int(acked.Add(int64(n)))
				mu.Lock()
				r.lats = append(r.lats, lat)
				r.refusals += int64(refused)
				for w := (total - n) / window; w < len(r.windows) && (w+1)*window <= total; w++ {
					if r.windows[w] == 0 {
						r.windows[w] = time.Since(begin)
					}
				}
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
	r.elapsed = time.Since(begin)
	if last := len(r.windows) - 1; last >= 0 && r.windows[last] == 0 {
		r.windows[last] = r.elapsed
	}
	return r, firstErr
}

// print reports throughput overall and per window (the last window is
// what a store that already holds the rest sustains), ack latency and the
// overload answers.
func (r loadRun) print(unit string) {
	fmt.Printf("  throughput  %.0f %s/s overall\n", float64(r.records)/r.elapsed.Seconds(), unit)
	var rates []string
	prev := time.Duration(0)
	for i, at := range r.windows {
		n := min(r.window, r.records-i*r.window)
		rates = append(rates, fmt.Sprintf("%.0f", float64(n)/(at-prev).Seconds()))
		prev = at
	}
	fmt.Printf("  per %d %s  %s %s/s (last: %s)\n", r.window, unit, strings.Join(rates, " "), unit, rates[len(rates)-1])
	s := slices.Clone(r.lats)
	slices.Sort(s)
	fmt.Printf("  ack latency p50 %v  p99 %v  p99.9 %v  max %v  (per request)\n",
		pctSorted(s, 500), pctSorted(s, 990), pctSorted(s, 999), s[len(s)-1].Round(10*time.Microsecond))
	fmt.Printf("  overload answers (429/503, retried) %d\n", r.refusals)
}

func pctSorted(s []time.Duration, permille int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, len(s)*permille/1000)].Round(10 * time.Microsecond)
}

// diskBytes is the size of everything under dir.
func diskBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// textPool is a pool of distinct made-up sentences: every record carries
// different text, as real prompts do. Identical padding would compress to
// almost nothing in the store and flatter its figures.
type textPool []string

func newTextPool(size, bytes int) textPool {
	rng := rand.New(rand.NewPCG(42, 42))
	words := make([]string, 5000)
	for i := range words {
		b := make([]byte, 2+rng.IntN(9))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(b)
	}
	pool := make(textPool, size)
	for i := range pool {
		var sb strings.Builder
		for sb.Len() < bytes {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		pool[i] = sb.String()
	}
	return pool
}

func (p textPool) pick(rng *rand.Rand) string { return p[rng.IntN(len(p))] }
