package jobs

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkLeaseWith1000Queued: one lease and one new job per op, so
// the queue stays 1,000 deep, with 100 jobs running.
func BenchmarkLeaseWith1000Queued(b *testing.B) {
	m, pos := New(), int64(0)
	apply := func(c Command) Result {
		pos++
		c.ID = fmt.Sprint("c", pos)
		c.At = t0.Add(time.Duration(pos))
		return m.Apply(pos, c)
	}
	create := func() {
		apply(Command{Kind: KindCreate, JobID: fmt.Sprint("j", pos), ProjectID: "acme/p", ModelID: "m", MaxAttempts: 1})
	}
	for range 1100 {
		create()
	}
	for range 100 {
		apply(Command{Kind: KindLease, Entity: "acme", TTL: time.Hour})
	}
	b.ResetTimer()
	for b.Loop() {
		if !apply(Command{Kind: KindLease, Entity: "acme", TTL: time.Hour}).Granted {
			b.Fatal("no job")
		}
		create()
	}
}

// BenchmarkAppend50Events: one append of 50 gradient steps per op.
func BenchmarkAppend50Events(b *testing.B) {
	m := New()
	m.Apply(1, Command{ID: "c", At: t0, Kind: KindCreate, JobID: "j", ProjectID: "acme/p", ModelID: "m", MaxAttempts: 1})
	r := m.Apply(2, Command{ID: "l", At: t0, Kind: KindLease, Entity: "acme", TTL: time.Hour})
	evs := make([]NewEvent, 50)
	for i := range evs {
		evs[i] = gradient(float64(i))
	}
	pos, from := int64(2), int64(1)
	for b.Loop() {
		pos++
		m.Apply(pos, Command{ID: "a", At: t0, Kind: KindAppend, JobID: "j", LeaseID: r.Job.LeaseID, From: from, Events: evs})
		from += 50
	}
}
