package conformance

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// threadStore is what the threads cases need from a backend.
type threadStore interface {
	storage.CallWriter
	storage.ThreadReader
}

// runThreads runs every threads case against stores made by newStore.
func runThreads(t *testing.T, newStore func(t *testing.T) threadStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s threadStore)
	}{
		{"AggregatesTurns", testThreadAggregates},
		{"BadSortYieldsOneError", testThreadBadSort},
		{"CancelledContextYieldsNoRow", testThreadCancelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// turn writes a call of a thread; a negative dur leaves it running.
func turn(id, thread, turnID string, at, dur time.Duration) []storage.CallOp {
	s := start("e/t", id, "tr-"+id, "", "op", base.Add(at))
	s.Part.Call.ThreadID, s.Part.Call.TurnID = thread, turnID
	if dur < 0 {
		return []storage.CallOp{s}
	}
	return []storage.CallOp{s, end("e/t", id, base.Add(at+dur), `null`)}
}

func queryThreads(t *testing.T, s threadStore, q storage.ThreadsQuery) []storage.Thread {
	t.Helper()
	var out []storage.Thread
	for th, err := range s.QueryThreads(context.Background(), q) {
		if err != nil {
			t.Fatalf("QueryThreads: %v", err)
		}
		out = append(out, th)
	}
	return out
}

// writeThreadFixture writes turns of three threads: th1 with two ended
// turns and a child call, th2 still running, th3 deleted; and a call of no
// thread.
func writeThreadFixture(t *testing.T, s threadStore) {
	var ops []storage.CallOp
	for _, tr := range []struct {
		id, thread, turn string
		at, dur          time.Duration
	}{
		{"a1", "th1", "a1", time.Minute, 1500 * time.Millisecond},
		{"a2", "th1", "a1", 2 * time.Minute, time.Second}, // a child, not a turn
		{"a3", "th1", "a3", 5 * time.Minute, time.Second},
		{"b1", "th2", "b1", 3 * time.Minute, -1}, // running: th2 is skipped
		{"e1", "", "e1", 3 * time.Minute, time.Second},
		{"d1", "th3", "d1", 4 * time.Minute, time.Second}, // deleted below
	} {
		ops = append(ops, turn(tr.id, tr.thread, tr.turn, tr.at, tr.dur)...)
	}
	ops = append(ops, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/t", IDs: []string{"d1"}, At: base}})
	write(t, s, ops...)
}

func testThreadAggregates(t *testing.T, s threadStore) {
	writeThreadFixture(t, s)
	got := queryThreads(t, s, storage.ThreadsQuery{ProjectID: "e/t"})
	if len(got) != 1 {
		t.Fatalf("threads = %+v; want only th1", got)
	}
	th := got[0]
	want := storage.Thread{ThreadID: "th1", TurnCount: 2, StartTime: base.Add(time.Minute),
		LastUpdated: base.Add(5*time.Minute + time.Second), FirstTurnID: "a1", LastTurnID: "a3"}
	if th.StartTime.Location() != time.UTC || th.LastUpdated.Location() != time.UTC {
		t.Errorf("times are not UTC: %v, %v", th.StartTime, th.LastUpdated)
	}
	if !th.StartTime.Equal(want.StartTime) || !th.LastUpdated.Equal(want.LastUpdated) {
		t.Errorf("times = %v, %v; want %v, %v", th.StartTime, th.LastUpdated, want.StartTime, want.LastUpdated)
	}
	checkQuantile(t, "p50", th.P50TurnDurationMS, 1250)
	checkQuantile(t, "p99", th.P99TurnDurationMS, 1000+0.99*500)
	th.StartTime, th.LastUpdated, th.P50TurnDurationMS, th.P99TurnDurationMS = want.StartTime, want.LastUpdated, nil, nil
	if th != want {
		t.Errorf("thread = %+v; want %+v", th, want)
	}
	if other := queryThreads(t, s, storage.ThreadsQuery{ProjectID: "e/other"}); len(other) != 0 {
		t.Errorf("another project sees %+v", other)
	}
}

func checkQuantile(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-6 {
		t.Errorf("%s turn duration = %v; want %v", name, got, want)
	}
}

func testThreadBadSort(t *testing.T, s threadStore) {
	q := storage.ThreadsQuery{ProjectID: "e/t", SortBy: []storage.SortBy{{Field: "nope", Direction: "asc"}}}
	n := 0
	for th, err := range s.QueryThreads(context.Background(), q) {
		n++
		if th != (storage.Thread{}) || !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("got %+v, %v; want one ErrInvalidArgument", th, err)
		}
	}
	if n != 1 {
		t.Errorf("the sequence yielded %d times; want once", n)
	}
}

func testThreadCancelled(t *testing.T, s threadStore) {
	write(t, s, turn("a1", "th1", "a1", 0, time.Second)...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range s.QueryThreads(ctx, storage.ThreadsQuery{ProjectID: "e/t"}) {
		if err == nil {
			t.Error("a cancelled query yielded a row")
		}
	}
}
