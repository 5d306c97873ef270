// Package delivery sends webhook deliveries: one signed POST per attempt
// through the egress client, retried at least once until a 2xx, with
// exponential backoff and jitter over a bounded window, Retry-After
// honoured, redirects never followed, and a 410 or days of failure
// disabling the webhook. Workers lease due deliveries from the store, so
// an attempt cut short by a crash is made again by whoever holds the
// delivery next, with the same webhook-id.
//
// It must never import the automation service above it (package
// automations), the HTTP API or a storage backend.
package delivery

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy is the retry schedule: the pause after attempt n is
// Initial*2^(n-1), at most Max, drawn uniformly from its upper half
// (jitter spreads retries of many deliveries that failed together); no
// attempt is scheduled after MaxElapsed from the retry window's start.
type Policy struct {
	Initial    time.Duration
	Max        time.Duration
	MaxElapsed time.Duration
	// Rand draws jitter in [0, n); nil uses math/rand/v2.
	Rand func(n int64) int64
}

// Validate reports a schedule that cannot work.
func (p Policy) Validate() error {
	switch {
	case p.Initial <= 0:
		return fmt.Errorf("retry.initial_interval must be positive")
	case p.Max < p.Initial:
		return fmt.Errorf("retry.max_interval (%s) must be at least retry.initial_interval (%s)", p.Max, p.Initial)
	case p.MaxElapsed < p.Initial:
		return fmt.Errorf("retry.max_elapsed (%s) must be at least retry.initial_interval (%s)", p.MaxElapsed, p.Initial)
	}
	return nil
}

// Backoff is the jittered pause after the attempts-th failed attempt.
func (p Policy) Backoff(attempts int) time.Duration {
	d := p.Initial
	for i := 1; i < attempts && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	half := d / 2
	if half <= 0 {
		return d
	}
	draw := p.Rand
	if draw == nil {
		draw = rand.Int64N
	}
	return d - half + time.Duration(draw(int64(half)+1))
}

// Next schedules the attempt after the attempts-th failure at now: not
// before floor (a receiver's Retry-After), and false when that falls
// beyond the retry window that started at from.
func (p Policy) Next(attempts int, from, now time.Time, floor time.Duration) (time.Time, bool) {
	at := now.Add(max(p.Backoff(attempts), floor))
	if at.Sub(from) > p.MaxElapsed {
		return time.Time{}, false
	}
	return at, true
}
