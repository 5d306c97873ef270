package sqlgen

import (
	"math"
	"slices"
	"testing"
	"time"
)

// The threads tests of threads_test.go, on ClickHouse.

func TestClickHouseThreadsRow(t *testing.T) {
	conn := openCH(t, threadFixtures(), nil)
	st, err := ThreadsSelect(NewClickHouse(), ThreadsQuery{ProjectID: "e/t"})
	if err != nil {
		t.Fatal(err)
	}
	rows := chRows(t, conn, st)
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

func TestClickHouseThreadsQuery(t *testing.T) {
	conn := openCH(t, threadFixtures(), nil)
	after, before := at(6*time.Minute), at(8*time.Minute+30*time.Second)
	tests := []struct {
		name string
		q    ThreadsQuery
		want []string
	}{
		{"default last_updated desc", ThreadsQuery{}, []string{"th3", "th1"}},
		{"turn_count asc", ThreadsQuery{SortBy: sortBy("turn_count", "asc")}, []string{"th1", "th3"}},
		{"p50 desc", ThreadsQuery{SortBy: sortBy("p50_turn_duration_ms", "DESC")}, []string{"th1", "th3"}},
		{"thread_id asc", ThreadsQuery{SortBy: sortBy("thread_id", "asc")}, []string{"th1", "th3"}},
		{"after", ThreadsQuery{AfterDatetime: &after}, []string{"th3"}},
		{"after is exclusive", ThreadsQuery{AfterDatetime: ptrTime(at(7 * time.Minute))}, []string{"th3"}},
		{"before", ThreadsQuery{BeforeDatetime: &before}, []string{"th3", "th1"}},
		{"before drops later turns", ThreadsQuery{BeforeDatetime: ptrTime(at(4 * time.Minute))}, []string{"th1"}},
		{"thread_ids", ThreadsQuery{ThreadIDs: []string{"th1", "th2"}}, []string{"th1"}},
		{"thread_ids empty", ThreadsQuery{ThreadIDs: []string{}}, nil},
		{"limit", ThreadsQuery{Limit: 1}, []string{"th3"}},
		{"offset", ThreadsQuery{Limit: 1, Offset: 1}, []string{"th1"}},
		{"other project", ThreadsQuery{ProjectID: "e/p"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.q.ProjectID == "" {
				tt.q.ProjectID = "e/t"
			}
			st, err := ThreadsSelect(NewClickHouse(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range chRows(t, conn, st) {
				got = append(got, r["thread_id"].(string))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}
