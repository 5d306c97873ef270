package sqlgen

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// threadFixtures live in project e/t: th1 has turns of 1500 ms and 1000 ms,
// th3 turns of 100, 300 and 200 ms; th2's only turn is running; "" and
// non-turn calls do not count.
func threadFixtures() []call {
	turn := func(id, thread, turnID string, start, dur time.Duration) call {
		c := call{project: "e/t", id: id, trace: "t-" + id, thread: thread, turn: turnID, op: "op", started: at(start), inputs: `{}`}
		if dur >= 0 {
			c.ended = ptrTime(at(start + dur))
		}
		return c
	}
	deleted := turn("d1", "th1", "d1", 20*time.Minute, time.Hour)
	deleted.deleted = ptrTime(at(time.Hour))
	return []call{
		turn("a1", "th1", "a1", time.Minute, 1500*time.Millisecond),
		turn("a2", "th1", "a1", 2*time.Minute, time.Second), // a child, not a turn
		turn("a3", "th1", "a3", 5*time.Minute, time.Second),
		turn("b1", "th2", "b1", 3*time.Minute, -1),
		turn("e1", "''", "e1", 3*time.Minute, time.Second),
		turn("c1", "th3", "c1", 7*time.Minute, 100*time.Millisecond),
		turn("c2", "th3", "c2", 8*time.Minute, 300*time.Millisecond),
		turn("c3", "th3", "c3", 9*time.Minute, 200*time.Millisecond),
		deleted,
	}
}

func TestThreadsRow(t *testing.T)   { testThreadsRow(t, duckDBThreads(t)) }
func TestThreadsQuery(t *testing.T) { testThreadsQuery(t, duckDBThreads(t)) }

func testThreadsRow(t *testing.T, e engine) {
	st, err := ThreadsSelect(e.d, storage.ThreadsQuery{ProjectID: "e/t"})
	if err != nil {
		t.Fatal(err)
	}
	rows := e.rows(t, st)
	if len(rows) != 2 {
		t.Fatalf("got %d threads; want th3 and th1", len(rows))
	}
	want := []map[string]any{
		{"thread_id": "th3", "turn_count": int64(3), "start_time": at(7 * time.Minute),
			"last_updated": at(9*time.Minute + 200*time.Millisecond), "first_turn_id": "c1", "last_turn_id": "c3",
			"p50_turn_duration_ms": 200.0, "p99_turn_duration_ms": 200 + 0.98*100},
		{"thread_id": "th1", "turn_count": int64(2), "start_time": at(time.Minute),
			"last_updated": at(5*time.Minute + time.Second), "first_turn_id": "a1", "last_turn_id": "a3",
			"p50_turn_duration_ms": 1250.0, "p99_turn_duration_ms": 1000 + 0.99*500},
	}
	for i, w := range want {
		for col, v := range w {
			got := rows[i][col]
			if f, ok := v.(float64); ok {
				if g, ok := got.(float64); !ok || math.Abs(g-f) > 1e-9 {
					t.Errorf("%s.%s = %v; want %v", w["thread_id"], col, got, v)
				}
				continue
			}
			if got != v {
				t.Errorf("%s.%s = %#v; want %#v", w["thread_id"], col, got, v)
			}
		}
	}
}

func testThreadsQuery(t *testing.T, e engine) {
	after, before := at(6*time.Minute), at(8*time.Minute+30*time.Second)
	tests := []struct {
		name string
		q    storage.ThreadsQuery
		want []string
	}{
		{"default last_updated desc", storage.ThreadsQuery{}, []string{"th3", "th1"}},
		{"turn_count asc", storage.ThreadsQuery{SortBy: sortBy("turn_count", "asc")}, []string{"th1", "th3"}},
		{"p50 desc", storage.ThreadsQuery{SortBy: sortBy("p50_turn_duration_ms", "DESC")}, []string{"th1", "th3"}},
		{"thread_id asc", storage.ThreadsQuery{SortBy: sortBy("thread_id", "asc")}, []string{"th1", "th3"}},
		{"after", storage.ThreadsQuery{AfterDatetime: &after}, []string{"th3"}},
		{"after is exclusive", storage.ThreadsQuery{AfterDatetime: ptrTime(at(7 * time.Minute))}, []string{"th3"}},
		{"before", storage.ThreadsQuery{BeforeDatetime: &before}, []string{"th3", "th1"}},
		{"before drops later turns", storage.ThreadsQuery{BeforeDatetime: ptrTime(at(4 * time.Minute))}, []string{"th1"}},
		{"thread_ids", storage.ThreadsQuery{ThreadIDs: []string{"th1", "th2"}}, []string{"th1"}},
		{"thread_ids empty", storage.ThreadsQuery{ThreadIDs: []string{}}, nil},
		{"limit", storage.ThreadsQuery{Limit: 1}, []string{"th3"}},
		{"offset", storage.ThreadsQuery{Limit: 1, Offset: 1}, []string{"th1"}},
		{"other project", storage.ThreadsQuery{ProjectID: "e/p"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.q.ProjectID == "" {
				tt.q.ProjectID = "e/t"
			}
			st, err := ThreadsSelect(e.d, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range e.rows(t, st) {
				got = append(got, r["thread_id"].(string))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

func TestThreadsErrors(t *testing.T) {
	long := make([]string, MaxFilterList+1)
	tests := []struct {
		name    string
		q       storage.ThreadsQuery
		mention string
	}{
		{"sort field", storage.ThreadsQuery{SortBy: sortBy("first_turn_id", "asc")}, "sort_by[0].field"},
		{"direction", storage.ThreadsQuery{SortBy: sortBy("turn_count", "sideways")}, "sort_by[0].direction"},
		{"too many ids", storage.ThreadsQuery{ThreadIDs: long}, "thread_ids"},
	}
	for _, tt := range tests {
		_, err := ThreadsSelect(NewDuckDB(), tt.q)
		if !errors.Is(err, storage.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("%s: got %v; want ErrInvalidArgument mentioning %s", tt.name, err, tt.mention)
		}
	}
}
