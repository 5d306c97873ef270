package inference

import (
	"sync"
	"time"
)

// rateWindow is the length of a rate limit's window. Windows start on the
// whole UTC minute, so every replica counts the same windows.
const rateWindow = time.Minute

// windowOf is the index of the window holding t.
func windowOf(t time.Time) int64 { return t.Unix() / int64(rateWindow/time.Second) }

// windowStart is when window w starts.
func windowStart(w int64) time.Time { return time.Unix(w*int64(rateWindow/time.Second), 0).UTC() }

// windowEnd is when window w ends.
func windowEnd(w int64) time.Time { return windowStart(w + 1) }

// usage is what a window admitted.
type usage struct{ requests, tokens int64 }

// windowCounter counts one limit's current window on this replica, and
// holds what the other replicas published for it. Its lock is held for a
// few additions; requests of different limits never share one.
type windowCounter struct {
	scope string // as published: "project:<id>" or "key:<id>"

	mu     sync.Mutex
	window int64
	local  usage // admitted here in window
	others usage // the other replicas' sum for othersWindow
	// othersWindow is the window others counts, which may lag window by
	// one until the next sync.
	othersWindow int64
	// dirty: local changed since it was last published.
	dirty bool
	// retired: dropped from its limiter; requests go to its successor.
	retired bool
}

// verdict is a counter's answer to one request: whether it was admitted,
// and the state the x-ratelimit headers report. Remaining counts after
// the request; refusedTokens names which dimension refused.
type verdict struct {
	ok                               bool
	refusedTokens                    bool
	requestTooLarge                  bool
	limitRequests, remainingRequests int64
	limitTokens, remainingTokens     int64
	reset                            time.Duration // until the window ends
	usedRequests, usedTokens, asked  int64
}

// roll moves the counter to window w, starting it empty.
func (c *windowCounter) roll(w int64) {
	if c.window != w {
		c.window, c.local, c.dirty = w, usage{}, true
	}
}

// used is every replica's count of the current window, as far as known.
func (c *windowCounter) used() usage {
	u := c.local
	if c.othersWindow == c.window {
		u.requests += c.others.requests
		u.tokens += c.others.tokens
	}
	return u
}

// admit counts one request of tokens against rule at now, unless it would
// go over either of rule's limits.
// A retired counter answers ok false with live false.
func (c *windowCounter) admit(rule LimitRule, now time.Time, tokens int64) (v verdict, live bool) {
	w := windowOf(now)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retired {
		return v, false
	}
	c.roll(w)
	u := c.used()
	v = verdict{limitRequests: rule.RequestsPerMinute, limitTokens: rule.TokensPerMinute, reset: windowEnd(w).Sub(now),
		usedRequests: u.requests, usedTokens: u.tokens, asked: tokens}
	switch {
	case rule.TokensPerMinute > 0 && tokens > rule.TokensPerMinute:
		v.refusedTokens, v.requestTooLarge = true, true
	case rule.RequestsPerMinute > 0 && u.requests+1 > rule.RequestsPerMinute:
	case rule.TokensPerMinute > 0 && u.tokens+tokens > rule.TokensPerMinute:
		v.refusedTokens = true
	default:
		v.ok = true
		c.local.requests++
		c.local.tokens += tokens
		c.dirty = true
		u.requests++
		u.tokens += tokens
	}
	v.remainingRequests = max(rule.RequestsPerMinute-u.requests, 0)
	v.remainingTokens = max(rule.TokensPerMinute-u.tokens, 0)
	return v, true
}

// adjust corrects the tokens counted in window w by delta (the recorded
// usage less the estimate), and takes back one request when undo is set
// (the request was admitted here but refused by another limit). A window
// already over is left as it was.
func (c *windowCounter) adjust(w int64, delta int64, undo bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window != w {
		return
	}
	c.local.tokens = max(c.local.tokens+delta, 0)
	if undo {
		c.local.requests = max(c.local.requests-1, 0)
	}
	c.dirty = true
}

// snapshot is the local count of the current window for publishing, and
// whether it changed since the last; it marks it published.
func (c *windowCounter) snapshot() (w int64, u usage, changed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, u, changed = c.window, c.local, c.dirty
	c.dirty = false
	return w, u, changed
}

// setOthers records the other replicas' sum for window w; an older
// window than the last recorded is ignored. The counter's own window
// moves only with requests, so a counter nobody uses stays idle.
func (c *windowCounter) setOthers(w int64, u usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w < c.othersWindow {
		return
	}
	c.others, c.othersWindow = u, w
}

// retireIfIdle reports a counter with nothing to count in window w or
// after, and retires it: a request holding it takes a new one.
func (c *windowCounter) retireIfIdle(w int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retired = c.window < w && !c.dirty && (c.othersWindow < w || c.others == usage{})
	return c.retired
}
