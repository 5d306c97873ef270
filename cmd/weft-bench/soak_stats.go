package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// soakKind is the tally of one kind of request.
type soakKind struct {
	ok, refused, failed, interrupted int
	lats                             []time.Duration // of the answered ones (ok and refused)
	firstErrors                      []string
}

// soakStats tallies every request of the soak by kind.
type soakStats struct {
	mu    sync.Mutex
	kinds map[string]*soakKind
	order []string
	log   io.Writer
}

func newSoakStats(log io.Writer) *soakStats {
	return &soakStats{kinds: map[string]*soakKind{}, log: log}
}

func (s *soakStats) kind(name string) *soakKind {
	k := s.kinds[name]
	if k == nil {
		k = &soakKind{}
		s.kinds[name] = k
		s.order = append(s.order, name)
	}
	return k
}

// outcome of one request.
type outcome int

const (
	answeredOK  outcome = iota // 2xx, body read whole
	refused                    // 429 or 503: overload, not acknowledged
	failed                     // anything else while its process stayed up
	interrupted                // the process it went to was killed or restarted meanwhile, or the load stopped
)

// soakReq is one HTTP request of the soak.
type soakReq struct {
	kind   string
	proc   *soakProc
	method string
	path   string
	body   []byte
	header map[string]string
	// read consumes a 2xx body; an error from it is a short answer.
	read func(io.Reader) error
	// ok reports whether a 2xx status is the expected answer (default:
	// any 2xx).
	okStatus func(int) bool
}

// soakClient sends the soak's requests and tallies them.
type soakClient struct {
	http  *http.Client
	key   string
	stats *soakStats
}

// do sends r and classifies its answer. retryAfter is the pause a
// refusal asks for.
func (c *soakClient) do(ctx context.Context, r soakReq) (o outcome, status int, retryAfter time.Duration) {
	gen, up := r.proc.state()
	begin := time.Now()
	status, retryAfter, err := c.send(ctx, r)
	lat := time.Since(begin)
	gen2, up2 := r.proc.state()
	stable := up && up2 && gen == gen2
	switch {
	case err == nil && (r.okStatus == nil && status/100 == 2 || r.okStatus != nil && r.okStatus(status)):
		o = answeredOK
	case err == nil && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable):
		o = refused
	case !stable || ctx.Err() != nil || err != nil && r.proc.exitsWithin(gen, time.Second):
		// A connection broken by the process's own death is counted
		// as its crash, not as a failed request.
		o = interrupted
	default:
		o = failed
	}
	s := c.stats
	s.mu.Lock()
	k := s.kind(r.kind)
	switch o {
	case answeredOK:
		k.ok++
		k.lats = append(k.lats, lat)
	case refused:
		k.refused++
		k.lats = append(k.lats, lat)
	case interrupted:
		k.interrupted++
	case failed:
		k.failed++
		msg := fmt.Sprintf("%s %s: status %d, %v", r.method, r.path, status, err)
		if len(k.firstErrors) < 5 {
			k.firstErrors = append(k.firstErrors, msg)
		}
		fmt.Fprintf(s.log, "FAILED %s: %s\n", r.kind, msg)
	}
	s.mu.Unlock()
	return o, status, retryAfter
}

// errShort marks an answer whose body ended early or did not parse.
var errShort = errors.New("short answer")

func (c *soakClient) send(ctx context.Context, r soakReq) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, r.proc.url+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var retry time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		retry = time.Duration(s) * time.Second
	}
	if resp.StatusCode/100 == 2 && r.read != nil {
		if err := r.read(resp.Body); err != nil {
			return resp.StatusCode, 0, fmt.Errorf("%w: %v", errShort, err)
		}
		return resp.StatusCode, retry, nil
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, retry, err
}

// acked sends r until it is answered, waiting out refusals (at most 2 s
// each, as SDKs do), or until stop. It reports whether it was
// acknowledged.
func (c *soakClient) acked(ctx context.Context, stop <-chan struct{}, r soakReq) bool {
	for {
		o, _, retry := c.do(ctx, r)
		switch o {
		case answeredOK:
			return true
		case refused:
			if !sleepOrStop(ctx, stop, min(max(retry, 50*time.Millisecond), 2*time.Second)) {
				return false
			}
		default:
			// Not acknowledged: it may or may not have been kept, so it
			// is left out of the ledger; a short pause before the next.
			sleepOrStop(ctx, stop, 100*time.Millisecond)
			return false
		}
	}
}

func sleepOrStop(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// pacer spaces requests out to a rate shared by the workers of a load.
type pacer struct {
	mu   sync.Mutex
	per  time.Duration // per unit
	next time.Time
}

func newPacer(perSecond float64) *pacer {
	if perSecond <= 0 {
		return nil
	}
	return &pacer{per: time.Duration(float64(time.Second) / perSecond)}
}

// wait reserves n units and sleeps until they are due; false on stop.
func (p *pacer) wait(ctx context.Context, stop <-chan struct{}, n int) bool {
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now.Add(-time.Second)) {
		p.next = now // no bursts to catch up after a stall
	}
	due := p.next
	p.next = p.next.Add(time.Duration(n) * p.per)
	p.mu.Unlock()
	if d := time.Until(due); d > 0 {
		return sleepOrStop(ctx, stop, d)
	}
	select {
	case <-stop:
		return false
	default:
		return ctx.Err() == nil
	}
}

// kindRow is one line of the requests table.
type kindRow struct {
	Kind                             string
	OK, Refused, Failed, Interrupted int
	P50, P99, Max                    time.Duration
	FirstErrors                      []string
}

func (s *soakStats) rows() []kindRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Clone(s.order)
	sort.Strings(names)
	var out []kindRow
	for _, n := range names {
		k := s.kinds[n]
		l := slices.Clone(k.lats)
		slices.Sort(l)
		r := kindRow{Kind: n, OK: k.ok, Refused: k.refused, Failed: k.failed, Interrupted: k.interrupted,
			P50: pctSorted(l, 500), P99: pctSorted(l, 990), FirstErrors: slices.Clone(k.firstErrors)}
		if len(l) > 0 {
			r.Max = l[len(l)-1].Round(10 * time.Microsecond)
		}
		out = append(out, r)
	}
	return out
}

func (s *soakStats) total() (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.kinds {
		n += k.ok + k.refused + k.failed + k.interrupted
	}
	return n
}
