package inference

import (
	"net/http"
	"strconv"
	"time"

	"github.com/weftdev/weft/internal/backoff"
)

// nextAttempt is the gateway's one retry decision: after an attempt
// failed with f, whether to make another and after what pause. untried
// says an upstream not tried in this round can take the request: failing
// over to it needs no pause and is no retry. Otherwise the same
// upstreams are tried again only for a failure worth retrying, within
// MaxRetries and MaxElapsed, after the upstream's Retry-After when it is
// short enough, or else a jittered backoff.
func (c RetryConfig) nextAttempt(f *failure, untried bool, retries int, elapsed time.Duration) (again bool, pause time.Duration) {
	switch {
	case untried:
		return true, 0
	case !retryable(f) || retries >= c.MaxRetries:
		return false, 0
	}
	pause = backoff.Jittered(retries, c.Backoff, c.MaxBackoff)
	if f.retryAfter > 0 {
		if f.retryAfter > c.MaxRetryAfter {
			return false, 0
		}
		pause = f.retryAfter
	}
	if elapsed+pause > c.MaxElapsed {
		return false, 0
	}
	return true, pause
}

// retryable lists the failures another try may not repeat: no answer at
// all, a timeout, rate limiting and an overloaded or failing server.
func retryable(f *failure) bool {
	switch f.status {
	case 0, http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// countsAgainst lists the failures that count toward opening an
// upstream's breaker: the upstream is unreachable or broken. A 429 is
// the upstream protecting itself, and a refusal of the request says
// nothing of its health.
func countsAgainst(f *failure) bool {
	return f.status == 0 || f.status >= 500
}

// upstreamRetryAfter reads an answer's Retry-After-Ms or Retry-After
// (seconds or an HTTP date); 0 when absent or unreadable.
func upstreamRetryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(s)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
