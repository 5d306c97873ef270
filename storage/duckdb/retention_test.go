package duckdb

import (
	"context"
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
