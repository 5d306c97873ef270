package clickhouse

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

func turnOps(id, thread, turn string, start, dur time.Duration) []storage.CallOp {
	s := startOp("e/t", id, "", t0.Add(start))
	s.Part.Call.ThreadID, s.Part.Call.TurnID = thread, turn
	if dur < 0 {
		return []storage.CallOp{s}
	}
	return []storage.CallOp{s, endOp("e/t", id, t0.Add(start+dur))}
}

func TestQueryThreads(t *testing.T) {
	s := openTestStore(t, Options{})
	var ops []storage.CallOp
	for _, tr := range []struct {
		id, thread, turn string
		start, dur       time.Duration
	}{
		{"a1", "th1", "a1", time.Minute, 1500 * time.Millisecond},
		{"a2", "th1", "a1", 2 * time.Minute, time.Second}, // a child, not a turn
		{"a3", "th1", "a3", 5 * time.Minute, time.Second},
		{"b1", "th2", "b1", 3 * time.Minute, -1}, // running: th2 is skipped
		{"e1", "", "e1", 3 * time.Minute, time.Second},
		{"d1", "th3", "d1", 4 * time.Minute, time.Second}, // deleted below
	} {
		ops = append(ops, turnOps(tr.id, tr.thread, tr.turn, tr.start, tr.dur)...)
	}
	ops = append(ops, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/t", IDs: []string{"d1"}, At: t0}})
	mustWrite(t, s, ops...)
	var rows [][]any
	for row, err := range s.QueryThreads(context.Background(), sqlgen.ThreadsQuery{ProjectID: "e/t"}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	us := func(d time.Duration) time.Time { return t0.Add(d).Truncate(time.Microsecond) }
	want := [][]any{{"th1", int64(2), us(time.Minute), us(5*time.Minute + time.Second), "a1", "a3", 1250.0, 1000 + 0.99*500}}
	if len(rows) != 1 {
		t.Fatalf("threads = %v; want only th1", rows)
	}
	for i, w := range want[0] {
		got := rows[0][i]
		if f, ok := w.(float64); ok {
			if g, ok := got.(float64); !ok || math.Abs(g-f) > 1e-6 {
				t.Errorf("%s = %v; want %v", sqlgen.ThreadColumns[i], got, w)
			}
			continue
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v; want %#v", sqlgen.ThreadColumns[i], got, w)
		}
	}
}
