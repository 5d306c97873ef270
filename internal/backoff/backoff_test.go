package backoff

import (
	"testing"
	"time"
)

func TestJitteredStaysWithinItsStep(t *testing.T) {
	cases := []struct {
		attempt int
		min     time.Duration
		max     time.Duration
	}{
		{0, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 400 * time.Millisecond, 800 * time.Millisecond},
		{10, 500 * time.Millisecond, time.Second},  // capped
		{200, 500 * time.Millisecond, time.Second}, // no overflow
	}
	for _, tc := range cases {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := Jittered(tc.attempt, 100*time.Millisecond, time.Second)
			if d < tc.min || d > tc.max {
				t.Fatalf("attempt %d: pause %v outside [%v, %v]", tc.attempt, d, tc.min, tc.max)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Fatalf("attempt %d: only %d distinct pauses in 200: no jitter", tc.attempt, len(seen))
		}
	}
}
