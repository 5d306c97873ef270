package inference

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Circuit breaker states, as the breaker state gauge reports them.
const (
	breakerClosed   int32 = 0 // requests flow
	breakerHalfOpen int32 = 1 // one probe is out; the others wait
	breakerOpen     int32 = 2 // cooling down: no requests until reopenAt
)

// breaker takes an upstream that keeps failing out of rotation for a
// cool-down, then lets one probe through: its success closes the breaker,
// its failure opens it for another cool-down. While closed, the common
// case, it costs one atomic load per request and one per answer; the
// mutex is taken only on the way to and from open, so requests skipping
// an open upstream do not queue on it.
type breaker struct {
	threshold int64
	coolDown  time.Duration
	gauge     prometheus.Gauge

	state atomic.Int32
	fails atomic.Int64 // consecutive failures while closed
	// reopenAt is when an open breaker lets a probe go, in Unix
	// nanoseconds; written under mu.
	reopenAt atomic.Int64

	mu sync.Mutex // serialises state changes
}

func newBreaker(threshold int, coolDown time.Duration, gauge prometheus.Gauge) *breaker {
	return &breaker{threshold: int64(threshold), coolDown: coolDown, gauge: gauge}
}

// available reports, without changing anything, whether allow may let a
// request through now: the balancer weighs only such upstreams.
func (b *breaker) available(now time.Time) bool {
	switch b.state.Load() {
	case breakerClosed:
		return true
	case breakerOpen:
		return now.UnixNano() >= b.reopenAt.Load()
	}
	return false
}

// allow admits a request. probe is true for the one request let through
// after a cool-down; its outcome must be reported with probe set.
func (b *breaker) allow(now time.Time) (ok, probe bool) {
	if b.state.Load() == breakerClosed {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state.Load() {
	case breakerClosed:
		return true, false
	case breakerOpen:
		if now.UnixNano() < b.reopenAt.Load() {
			return false, false
		}
		b.set(breakerHalfOpen)
		return true, true
	}
	return false, false // a probe is out
}

// retryIn is how long until an open breaker lets a probe through.
func (b *breaker) retryIn(now time.Time) time.Duration {
	return max(time.Duration(b.reopenAt.Load()-now.UnixNano()), 0)
}

// success reports an answer: the upstream works.
func (b *breaker) success(probe bool) {
	if !probe {
		if b.state.Load() == breakerClosed && b.fails.Load() != 0 {
			b.fails.Store(0)
		}
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails.Store(0)
	b.set(breakerClosed)
}

// failure reports a failure that counts against the upstream (no
// answer, or a server error).
func (b *breaker) failure(now time.Time, probe bool) {
	if !probe && (b.state.Load() != breakerClosed || b.fails.Add(1) < b.threshold) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe || b.state.Load() == breakerClosed {
		b.reopenAt.Store(now.Add(b.coolDown).UnixNano())
		b.set(breakerOpen)
	}
}

// abandon reports a probe whose outcome says nothing of the upstream (the
// client left, or the upstream refused the request itself): the next
// request probes instead.
func (b *breaker) abandon(now time.Time, probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reopenAt.Store(now.UnixNano())
	b.set(breakerOpen)
}

// set changes the state; b.mu is held.
func (b *breaker) set(s int32) {
	b.state.Store(s)
	b.gauge.Set(float64(s))
}
