package tracemetricsprocessor

import (
	"time"

	"github.com/zeebo/xxh3"
)

// callKey names a call by a 64-bit hash of its project and id: cheaper to
// look up than the two strings, and it keeps no string of the call alive.
// Two calls colliding among the few remembered is a 1 in 10^10 chance,
// which at worst leaves one call uncounted.
type callKey uint64

func keyOf(project, id string) callKey {
	return callKey(xxh3.HashStringSeed(id, xxh3.HashString(project)))
}

// openCall is what is remembered of a call: its op and start while it
// runs, and that it was counted once its end has been.
type openCall struct {
	op      string
	started int64 // Unix nanoseconds; 0 when not known
	ended   bool
}

func (c openCall) startedAt() time.Time {
	if c.started == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.started)
}

func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// openCalls remembers the last max calls seen, oldest forgotten first. A
// call's start and end may be stored in different batches (a call
// running longer than a batch), so the end finds its op and start here;
// and a retried end, or a start arriving after its end, finds the call
// already counted. Beyond the last max calls counting is at least once.
// It is not safe for concurrent use.
type openCalls struct {
	max   int
	calls map[callKey]openCall
	// ring holds the keys in the order they came; next is the slot the
	// next new key takes, forgetting the key there once the ring is full.
	ring []callKey
	next int
}

func newOpenCalls(max int) *openCalls {
	return &openCalls{max: max, calls: map[callKey]openCall{}}
}

func (o *openCalls) get(k callKey) (openCall, bool) {
	c, ok := o.calls[k]
	return c, ok
}

// update changes what is remembered of a call get found.
func (o *openCalls) update(k callKey, c openCall) { o.calls[k] = c }

// add remembers a call get did not find. forgotRunning reports that a
// call still running was forgotten to make room: its end will count
// under op "unknown".
func (o *openCalls) add(k callKey, c openCall) (forgotRunning bool) {
	if len(o.ring) < o.max {
		o.ring = append(o.ring, k)
	} else {
		old := o.ring[o.next]
		if oc, ok := o.calls[old]; ok {
			forgotRunning = !oc.ended
			delete(o.calls, old)
		}
		o.ring[o.next] = k
		o.next = (o.next + 1) % o.max
	}
	o.calls[k] = c
	return forgotRunning
}
