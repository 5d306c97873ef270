package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// openRequestTimeout bounds one request of an open-loop load: a request
// not answered by then counts as an error, so a stalled server cannot keep
// the load's goroutines forever.
const openRequestTimeout = 30 * time.Second

// schedule is an open-loop send plan: request i is due at i/rate after
// the start, whatever became of the requests before it.
type schedule struct {
	rate float64
	n    int
}

// newSchedule plans rate requests a second for d.
func newSchedule(rate float64, d time.Duration) schedule {
	return schedule{rate: rate, n: int(math.Round(rate * d.Seconds()))}
}

// due is when request i is due, from the start.
func (s schedule) due(i int) time.Duration {
	return time.Duration(float64(i) * float64(time.Second) / s.rate)
}

// openResult is one open-loop load against one endpoint. Latencies count
// from when each request was due, not from when it was sent, so a stall
// (of the server or of the load generator) shows instead of slowing the
// offered rate down.
type openResult struct {
	name     string
	offered  float64
	sent     int
	total    []time.Duration // due to the end of the answer, of the answered requests
	ttft     []time.Duration // due to the first event, of the answered streams
	lateSend []time.Duration // how late each request was sent
	errors   int
	firstErr error
	// span is from the first due time to the last answer.
	span time.Duration
}

// achieved is the answered requests per second, over the time from the
// first request due to the last answer.
func (r openResult) achieved() float64 {
	if r.span <= 0 {
		return 0
	}
	return float64(len(r.total)) / r.span.Seconds()
}

// quantile is the q-quantile (0..1) of sorted by the nearest-rank method,
// or 0 when there is none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// parseRates reads a comma-separated list of positive rates ("" is none).
func parseRates(flagName, s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 || math.IsInf(r, 0) {
			return nil, fmt.Errorf("%s: %q is not a positive rate", flagName, f)
		}
		out = append(out, r)
	}
	return out, nil
}

// runOpen sends requests to ep on the schedule of rate for d and waits for
// every answer. Each request goes out from its own goroutine at its due
// time, never waiting for earlier answers; bodies are built beforehand so
// the generator does little between sends.
func runOpen(ctx context.Context, client *http.Client, ep endpoint, stream bool, rate float64, d time.Duration, bodies [][]byte) openResult {
	s := newSchedule(rate, d)
	type outcome struct {
		ttft, total time.Duration
		err         error
	}
	out := make([]outcome, s.n)
	late := make([]time.Duration, 0, s.n)
	rng := rand.New(rand.NewPCG(uint64(rate), 11))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Time
	begin := time.Now().Add(time.Millisecond)
	for i := range s.n {
		due := begin.Add(s.due(i))
		sleepUntil(due)
		if ctx.Err() != nil {
			break
		}
		late = append(late, time.Since(due))
		body := bodies[rng.IntN(len(bodies))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, openRequestTimeout)
			defer cancel()
			ttft, end, err := requestFrom(rctx, client, ep, body, stream, due)
			out[i] = outcome{ttft: ttft, total: end, err: err}
			if err == nil {
				mu.Lock()
				if now := due.Add(end); now.After(last) {
					last = now
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r := openResult{name: ep.name, offered: rate, sent: len(late), lateSend: late, span: last.Sub(begin)}
	for _, o := range out[:len(late)] {
		switch {
		case o.err != nil:
			r.errors++
			if r.firstErr == nil {
				r.firstErr = o.err
			}
		default:
			r.total = append(r.total, o.total)
			if stream {
				r.ttft = append(r.ttft, o.ttft)
			}
		}
	}
	slices.Sort(r.total)
	slices.Sort(r.ttft)
	slices.Sort(r.lateSend)
	return r
}

// requestFrom sends one chat request and reads the whole answer; the
// durations count from start (the request's due time).
func requestFrom(ctx context.Context, client *http.Client, ep endpoint, body []byte, stream bool, start time.Time) (ttft, total time.Duration, err error) {
	resp, err := post(ctx, client, ep, body)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if !stream {
		_, err = io.Copy(io.Discard, resp.Body)
		return 0, time.Since(start), err
	}
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
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

// openBodies builds the chat requests an open-loop load picks from.
func openBodies(model string, stream bool) [][]byte {
	pool := newTextPool(1000, 100)
	bodies := make([][]byte, len(pool))
	for i, text := range pool {
		bodies[i] = chatBody(model, text, stream)
	}
	return bodies
}

// openClient is the load's HTTP client: enough idle connections per host
// that answers never wait for a free one and nothing is dialed during the
// measured phase once the warm-up opened them.
func openClient(rate float64) *http.Client {
	conns := max(256, int(rate))
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        2 * conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
}

// openWarmup is how long each endpoint is loaded at the measured rate
// before its measured phase, to open connections and warm caches.
const openWarmup = 2 * time.Second

// compareOpen runs one open-loop load at rate: first straight to the
// upstream, then through weft, each after a warm-up at the same rate, and
// prints the latencies of both, what weft added, its CPU per request, the
// trace records it lost and its peak RSS.
func compareOpen(ctx context.Context, t *target, direct, gateway endpoint, stream bool, rate float64, d time.Duration) error {
	bodies := [2][][]byte{openBodies(direct.model, stream), openBodies(gateway.model, stream)}
	client := openClient(rate)
	defer client.CloseIdleConnections()
	var res [2]openResult
	var cpu [2]time.Duration
	var switches [2]int64
	lostBefore, err := scrapeSum(t.url+"/metrics", "weft_inference_lost_calls")
	if err != nil {
		return err
	}
	for i, ep := range []endpoint{direct, gateway} {
		runOpen(ctx, client, ep, stream, rate, openWarmup, bodies[i])
		if err := ctx.Err(); err != nil {
			return err
		}
		before, switchesBefore := t.cpu(), contextSwitches(t.cmd.Process.Pid)
		res[i] = runOpen(ctx, client, ep, stream, rate, d, bodies[i])
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(cpuSettle)
		cpu[i], switches[i] = t.cpu()-before, contextSwitches(t.cmd.Process.Pid)-switchesBefore
		if len(res[i].total) == 0 {
			return fmt.Errorf("%s at %.0f/s: nothing answered: %v", ep.name, rate, res[i].firstErr)
		}
	}
	lostAfter, err := scrapeSum(t.url+"/metrics", "weft_inference_lost_calls")
	if err != nil {
		return err
	}
	mode := "plain"
	if stream {
		mode = "stream"
	}
	printOpen(mode, res, cpu, switches, lostAfter-lostBefore, t.peakRSS())
	return nil
}

func printOpen(mode string, res [2]openResult, cpu [2]time.Duration, switches [2]int64, lost float64, rss string) {
	rate := res[0].offered
	for _, r := range res {
		fmt.Printf("  %-6s %5.0f/s %-7s achieved %7.1f/s  answered %6d/%-6d errors %d  total p50 %9s p99 %9s max %9s",
			mode, rate, r.name, r.achieved(), len(r.total), r.sent, r.errors, ms(quantile(r.total, .5)), ms(quantile(r.total, .99)), ms(quantile(r.total, 1)))
		if len(r.ttft) > 0 {
			fmt.Printf("  ttft p50 %9s p99 %9s", ms(quantile(r.ttft, .5)), ms(quantile(r.ttft, .99)))
		}
		fmt.Printf("  sent late p50 %s p99 %s\n", ms(quantile(r.lateSend, .5)), ms(quantile(r.lateSend, .99)))
		if r.firstErr != nil {
			fmt.Printf("  %-6s %5.0f/s %-7s first error: %v\n", mode, rate, r.name, r.firstErr)
		}
	}
	dr, gr := res[0], res[1]
	fmt.Printf("  %-6s %5.0f/s added   p50 %s p99 %s", mode, rate,
		ms(quantile(gr.total, .5)-quantile(dr.total, .5)), ms(quantile(gr.total, .99)-quantile(dr.total, .99)))
	if len(gr.ttft) > 0 {
		fmt.Printf("  (ttft p50 %s p99 %s)", ms(quantile(gr.ttft, .5)-quantile(dr.ttft, .5)), ms(quantile(gr.ttft, .99)-quantile(dr.ttft, .99)))
	}
	perReq := float64(cpu[1].Microseconds()) / float64(len(gr.total))
	fmt.Printf("  weft CPU %.0f µs/request (%.2fs for %d; %.2fs while the upstream ran alone)  %.1f context switches/request  lost trace records %.0f  weft peak RSS %s\n",
		perReq, cpu[1].Seconds(), len(gr.total), cpu[0].Seconds(), float64(switches[1])/float64(len(gr.total)), lost, rss)
}

// contextSwitches sums the context switches, voluntary or not, of every
// thread of process pid so far (0 where /proc cannot say).
func contextSwitches(pid int) int64 {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var n int64
	for _, task := range tasks {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // the thread exited
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += k
			} else if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += k
			}
		}
	}
	return n
}

// scrapeSum sums every series of a metric (all its label sets) on a
// Prometheus text page; a metric with no series yet is 0.
func scrapeSum(url, metric string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", url, line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}
