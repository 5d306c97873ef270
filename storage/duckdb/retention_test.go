package duckdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func TestExpireCalls(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	mk := func(project, id string, age time.Duration) storage.CallOp {
		return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: project, ID: id, TraceID: "t", OpName: "op", StartedAt: now.Add(-age)}}}
	}
	day := 24 * time.Hour
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{
		mk("a/short", "old", 3*day), mk("a/short", "new", time.Hour),
		mk("a/keep", "ancient", 900*day), mk("b/default", "old", 40*day), mk("b/default", "new", day),
	}); err != nil {
		t.Fatal(err)
	}
	n, err := s.ExpireCalls(ctx, storage.Retention{Default: 30 * day, Projects: map[string]time.Duration{"a/short": 2 * day, "a/keep": 0}}, now)
	if err != nil || n != 2 {
		t.Fatalf("expired %d, %v; want 2", n, err)
	}
	for project, want := range map[string]int64{"a/short": 1, "a/keep": 1, "b/default": 1} {
		st, err := s.CountCalls(ctx, storage.CallsQuery{ProjectID: project}, 0)
		if err != nil || st.Count != want {
			t.Errorf("%s: %d calls (%v), want %d", project, st.Count, err, want)
		}
	}
}

// TestExpireCallsByRetentionChanges: a call is kept as long as the
// retention change in force when it started says; calls that started
// before a project's first change keep the configured retention.
func TestExpireCallsByRetentionChanges(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	ages := map[string]time.Duration{"d20": 20 * day, "d9": 9 * day, "d6": 6 * day, "d4": 4 * day, "h36": 36 * time.Hour, "h1": time.Hour}
	var ops []storage.CallOp
	for id, age := range ages {
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "c/p", ID: id, TraceID: "t", OpName: "op", StartedAt: now.Add(-age)}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	r := storage.Retention{Projects: map[string]time.Duration{"c/p": 0}}.WithChanges([]storage.RetentionChange{
		{ProjectID: "c/p", Days: 1, At: now.Add(-10 * day)},
		{ProjectID: "c/p", Days: 0, At: now.Add(-5 * day)},
		{ProjectID: "c/p", Days: 1, At: now.Add(-2 * day)},
	})
	n, err := s.ExpireCalls(ctx, r, now)
	if err != nil || n != 3 {
		t.Fatalf("expired %d, %v; want 3 (d9, d6, h36)", n, err)
	}
	var left []string
	for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "c/p", Columns: []string{"id"}, SortBy: []storage.SortBy{{Field: "id", Direction: "asc"}}}) {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, c.ID)
	}
	if strings.Join(left, ",") != "d20,d4,h1" {
		t.Errorf("left %v; want d20 (before any change), d4 (kept forever), h1 (within a day)", left)
	}
}
