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
	end := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	everything := []TimeRange{{From: time.Unix(0, 0), To: end}}
	var each []TimeRange // a range per call: a union of scans
	for _, c := range callFixtures() {
		each = append(each, TimeRange{From: c.started, To: c.started})
	}
	// Ranges that touch at a call's start and overlap: joined before they
	// are scanned, or that call would be read twice.
	touching := []TimeRange{{From: at(2 * time.Minute), To: end}, {From: time.Unix(0, 0), To: at(2 * time.Minute)}, {From: at(time.Minute), To: at(4 * time.Minute)}}
	separate := []TimeRange{{From: time.Unix(0, 0), To: at(90 * time.Second)}, {From: at(90*time.Second + time.Millisecond), To: end}}
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
		for _, ranges := range [][]TimeRange{everything, each, touching, separate} {
			if got := e.ids(t, mustSelect(t, e, q, StartedWithin(ranges))); !slices.Equal(got, full) {
				t.Errorf("query %d narrowed to %d ranges: %v, want %v", i, len(ranges), got, full)
			}
		}
		if got := e.ids(t, mustSelect(t, e, q, StartedWithin(nil))); len(got) != 0 {
			t.Errorf("query %d within no range: %v", i, got)
		}
		early := []TimeRange{{From: time.Unix(0, 0), To: time.Unix(1, 0)}}
		early2 := append(early, TimeRange{From: time.Unix(5, 0), To: time.Unix(6, 0)})
		for _, ranges := range [][]TimeRange{early, early2} {
			if got := e.ids(t, mustSelect(t, e, q, StartedWithin(ranges))); len(got) != 0 {
				t.Errorf("query %d within ranges before every call: %v", i, got)
			}
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
