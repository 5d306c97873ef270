// Package backoff computes the pause before a retry: exponential, capped,
// with jitter so that many clients failing together do not retry in step.
//
// It imports nothing of Weft.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jittered is the pause before retry attempt (0 for the first retry):
// lo doubled attempt times, capped at hi, then drawn at random from its
// upper half.
func Jittered(attempt int, lo, hi time.Duration) time.Duration {
	d := lo << min(attempt, 30)
	if d <= 0 || d > hi {
		d = hi
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits d, or until ctx ends; it reports whether the wait ran its
// course.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
