package delivery

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// outcome is what an attempt means for its delivery and webhook.
type outcome struct {
	delivered bool
	// permanent: no retry can help (the webhook is gone or disabled).
	permanent bool
	// requested: a request went out, so the webhook's health learns
	// from it.
	requested bool
	// gone: the receiver answered 410; the webhook is disabled.
	gone bool
	// floor is the receiver's Retry-After.
	floor  time.Duration
	reason string
	resp   Response
}

// classify reads an answer: 2xx delivered; 410 gone; 3xx a failure whose
// reason names the new location (redirects are not followed, the URL
// should change); anything else, and no answer, a failure to retry.
func classify(r Response, now time.Time) outcome {
	o := outcome{requested: true, resp: r}
	switch {
	case r.Status == 0:
		o.reason = "no answer: " + r.Err.Error()
	case r.Status >= 200 && r.Status < 300:
		o.delivered = true
	case r.Status == http.StatusGone:
		o.gone, o.permanent = true, true
		o.reason = "410 Gone: the receiver asked for no more deliveries; the webhook is disabled"
	case r.Status >= 300 && r.Status < 400:
		o.reason = fmt.Sprintf("%d redirect to %q not followed; update the webhook URL", r.Status, r.Header.Get("Location"))
	default:
		o.reason = fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
	}
	if !o.delivered {
		o.floor = retryAfter(r.Header.Get("Retry-After"), now)
	}
	return o
}

// retryAfter reads a Retry-After value: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(min(secs, int64(365*24*time.Hour/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
