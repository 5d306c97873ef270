package sqlgen

import (
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestStartedWithinAnswersAsTheFullRead checks that narrowing a read to
// ranges holding every match (one pass) answers exactly what the two-phase
// read answers, in the same order and pages, and that ranges holding
// nothing answer nothing.
func TestStartedWithinAnswersAsTheFullRead(t *testing.T) {
	e := duckDBFixture(t)
	everything := []TimeRange{{From: time.Unix(0, 0), To: time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)}}
	queries := []storage.CallsQuery{
		{Filter: storage.CallsFilter{TraceIDs: []string{"t1"}}},
		{Filter: storage.CallsFilter{TraceIDs: []string{"t1", "t2"}}, SortBy: []storage.SortBy{{Field: "started_at", Direction: "desc"}}},
		{Filter: storage.CallsFilter{TraceIDs: []string{"t1", "t2"}}, Limit: 2, Offset: 1},
		{Filter: storage.CallsFilter{TraceIDs: []string{"t1", "t2"}}, SortBy: []storage.SortBy{}, Limit: 2},
		{Filter: storage.CallsFilter{CallIDs: []string{"c01", "c03"}}, Columns: []string{"id", "inputs"}},
		{Filter: storage.CallsFilter{CallIDs: []string{"c01"}}, Limit: 1, IncludeStorageSize: true},
		{Filter: storage.CallsFilter{CallIDs: []string{"c01", "c02"}}, IncludeTotalStorageSize: true},
	}
	for i, q := range queries {
		q.ProjectID = "e/p"
		full := e.ids(t, mustSelect(t, e, q))
		if len(full) == 0 {
			t.Fatalf("query %d matches nothing; the case tests nothing", i)
		}
		if got := e.ids(t, mustSelect(t, e, q, StartedWithin(everything))); !slices.Equal(got, full) {
			t.Errorf("query %d narrowed: %v, want %v", i, got, full)
		}
		if got := e.ids(t, mustSelect(t, e, q, StartedWithin(nil))); len(got) != 0 {
			t.Errorf("query %d within no range: %v", i, got)
		}
		early := []TimeRange{{From: time.Unix(0, 0), To: time.Unix(1, 0)}}
		if got := e.ids(t, mustSelect(t, e, q, StartedWithin(early))); len(got) != 0 {
			t.Errorf("query %d within a range before every call: %v", i, got)
		}
	}
}

func mustSelect(t *testing.T, e engine, q storage.CallsQuery, opts ...CallsOption) Statement {
	t.Helper()
	st, err := CallsSelect(e.d, q, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
