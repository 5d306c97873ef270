package main

import (
	"syscall"
	"time"
)

// sleepUntil blocks the calling thread until t with nanosleep: Go's timers
// round short sleeps up to a millisecond when the runtime is idle, which
// would send an open-loop load's requests in bursts.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(int64(d))
		if err := syscall.Nanosleep(&ts, nil); err == nil {
			return
		}
	}
}
