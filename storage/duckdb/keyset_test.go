package duckdb

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// TestStreamsPageByKeys: a stream read page by page after the keys of
// each page's last call answers what one page holding every call
// answers, in both start-time orders, with ties on the start time across
// pages, calls without a start time, deleted calls and limits.
func TestStreamsPageByKeys(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	s.stopMinutesRefresher()
	t0 := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	var ops []storage.CallOp
	for i := range 60 {
		at := t0.Add(time.Duration(i/4) * time.Second) // four calls share each start time
		if i%17 == 5 {
			at = time.Time{} // no start time
		}
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p",
			ID: fmt.Sprintf("c%02d", (i*37)%60), TraceID: "t", OpName: "op", StartedAt: at}}})
	}
	// Project e/q: starts minutes to days apart, so windows run empty.
	for i := range 40 {
		at := t0.Add(time.Duration(i*i*i) * time.Minute)
		if i%13 == 4 {
			at = time.Time{}
		}
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/q",
			ID: fmt.Sprintf("q%02d", i), TraceID: "t", OpName: "op", StartedAt: at}}})
	}
	ops = append(ops, storage.CallOp{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"c07", "c33"}, At: t0}})
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	read := func(q storage.CallsQuery, pageSize int64) []string {
		t.Helper()
		s.pageSize = pageSize
		var ids []string
		for c, err := range s.QueryCalls(ctx, q) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		return ids
	}
	for name, q := range map[string]storage.CallsQuery{
		"default order":          {ProjectID: "e/p"},
		"newest first":           {ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "started_at", Direction: "desc"}}},
		"oldest first, limit 23": {ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "started_at", Direction: "asc"}}, Limit: 23},
		"newest first, limit 57": {ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "started_at", Direction: "desc"}}, Limit: 57},
		"columns":                {ProjectID: "e/p", Columns: []string{"id", "started_at"}},
		"sparse, oldest first":   {ProjectID: "e/q"},
		"sparse, newest first":   {ProjectID: "e/q", SortBy: []storage.SortBy{{Field: "started_at", Direction: "desc"}}},
		"sparse, limit 30":       {ProjectID: "e/q", Limit: 30},
	} {
		whole := read(q, 1000)
		if len(whole) < 20 {
			t.Fatalf("%s: read %d calls whole", name, len(whole))
		}
		for _, size := range []int64{1, 3, 4, 7, 55} {
			if got := read(q, size); !slices.Equal(got, whole) {
				t.Errorf("%s in pages of %d:\n%v\nwhole:\n%v", name, size, got, whole)
			}
		}
	}
}
