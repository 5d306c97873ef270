package app

import (
	"context"
	"time"
)

// idleLoopGrace is how long shutdown still waits for a stopped loop once
// its deadline has passed.
const idleLoopGrace = 200 * time.Millisecond

// awaitStopped waits for what a stopped loop sends (or the close of
// done); false when it has not come by ctx's deadline and the grace after
// it. Idle loops return as soon as they are stopped, so a deadline that
// other components used up should not count against them.
func awaitStopped[T any](ctx context.Context, done <-chan T) (T, bool) {
	select {
	case v := <-done:
		return v, true
	case <-ctx.Done():
	}
	select {
	case v := <-done:
		return v, true
	case <-time.After(idleLoopGrace):
		var zero T
		return zero, false
	}
}
