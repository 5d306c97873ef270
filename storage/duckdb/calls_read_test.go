package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// TestPagesFetchedByStartTimesMatchOneStatement reads sorted and filtered
// pages both ways (by start times, and in one statement joined back by
// row id) and requires the same calls in the same order, with their
// heavy columns.
func TestPagesFetchedByStartTimesMatchOneStatement(t *testing.T) {
	s := openTestStore(t)
	s.scatteredRows = 1 // a test store is too small to scatter a page over row groups
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var ops []storage.CallOp
	for i := range 3000 {
		id := fmt.Sprintf("c%04d", i)
		// Several calls share a start time, and starts repeat far apart,
		// so pages hold ties and calls from everywhere in the table.
		at := t0.Add(time.Duration(i/3)*time.Second + time.Duration(rng.IntN(2))*time.Hour)
		end := at.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
		op := "op-a"
		if i%7 == 0 {
			op = "op-b"
		}
		summary := json.RawMessage(fmt.Sprintf(`{"usage":{"m":{"requests":1,"total_tokens":%d}}}`, rng.IntN(900)))
		ops = append(ops,
			storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: id, TraceID: "t" + id,
				OpName: op, StartedAt: at, Inputs: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}},
			storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: id, EndedAt: &end,
				Summary: summary, Output: json.RawMessage(fmt.Sprintf(`"out %d"`, i))}}})
		if len(ops) == 400 {
			if _, err := s.WriteCallOps(ctx, ops); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	// Later ends merged into stored calls, as agents send them.
	for i := 0; i < 3000; i += 5 {
		ended := t0.Add(3 * time.Hour)
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p",
			ID: fmt.Sprintf("c%04d", i), EndedAt: &ended, Output: json.RawMessage(`"late"`)}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	opB := &querylang.Compare{Op: querylang.OpEq, Left: &querylang.GetField{Path: "op_name"}, Right: &querylang.Literal{Value: "op-b"}}
	cases := []struct {
		name string
		q    storage.CallsQuery
	}{
		{"latency desc", storage.CallsQuery{SortBy: []storage.SortBy{{Field: "summary.weave.latency_ms", Direction: "desc"}}, Limit: 50}},
		{"latency asc, third page", storage.CallsQuery{SortBy: []storage.SortBy{{Field: "summary.weave.latency_ms", Direction: "asc"}}, Limit: 40, Offset: 80}},
		{"tokens desc", storage.CallsQuery{SortBy: []storage.SortBy{{Field: "summary.weave.total_tokens", Direction: "desc"}}, Limit: 100}},
		{"default order", storage.CallsQuery{Limit: 100, Offset: 1000}},
		{"started_at desc, filtered", storage.CallsQuery{SortBy: []storage.SortBy{{Field: "started_at", Direction: "desc"}}, Where: opB, Limit: 30}},
		{"no order", storage.CallsQuery{SortBy: []storage.SortBy{}, Limit: 70}},
		{"columns", storage.CallsQuery{SortBy: []storage.SortBy{{Field: "ended_at", Direction: "desc"}}, Columns: []string{"id", "output"}, Limit: 25}},
		{"past the end", storage.CallsQuery{SortBy: []storage.SortBy{{Field: "summary.weave.latency_ms", Direction: "desc"}}, Limit: 50, Offset: 2990}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.ProjectID = "e/p"
			var byStarts []storage.StoredCall
			if !s.queryPageByStarts(ctx, q, func(c storage.StoredCall, err error) bool {
				if err != nil {
					t.Fatal(err)
				}
				byStarts = append(byStarts, c)
				return true
			}) {
				t.Fatal("the page was not read by start times")
			}
			located := s.located
			s.located = nil // one statement
			oneStatement := readAll(t, s, q)
			s.located = located
			if len(oneStatement) == 0 && tc.name != "past the end" {
				t.Fatal("the query matched nothing; the case proves nothing")
			}
			if len(byStarts) != len(oneStatement) {
				t.Fatalf("%d calls by start times, %d in one statement", len(byStarts), len(oneStatement))
			}
			for i := range byStarts {
				a, b := byStarts[i], oneStatement[i]
				if a.ID != b.ID || string(a.Output) != string(b.Output) || string(a.Inputs) != string(b.Inputs) || !a.StartedAt.Equal(b.StartedAt) {
					t.Fatalf("call %d: %s %s %s by start times, %s %s %s in one statement", i, a.ID, a.Inputs, a.Output, b.ID, b.Inputs, b.Output)
				}
			}
		})
	}
}

// TestPagesStoredTogetherReadInOneRange: a page whose rows lie in a row
// group or two is fetched in one statement over the span of their
// starts (spanGroup), and reads as the page read in one statement does.
func TestPagesStoredTogetherReadInOneRange(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	writeCallStarts(t, s, 500, func(i int) storage.Call {
		return storage.Call{ProjectID: "e/p", ID: fmt.Sprintf("c%04d", i), OpName: "op", StartedAt: t0.Add(time.Duration(i) * time.Minute)}
	})
	q := storage.CallsQuery{ProjectID: "e/p", SortBy: []storage.SortBy{{Field: "started_at", Direction: "desc"}}, Limit: 100}
	var byRange []string
	if !s.queryPageByStarts(ctx, q, func(c storage.StoredCall, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		byRange = append(byRange, c.ID)
		return true
	}) {
		t.Fatal("a page of calls stored together was not fetched by its starts")
	}
	located := s.located
	s.located = nil // one statement
	var oneStatement []string
	for _, c := range readAll(t, s, q) {
		oneStatement = append(oneStatement, c.ID)
	}
	s.located = located
	if len(byRange) != 100 || byRange[0] != "c0499" || !slices.Equal(byRange, oneStatement) {
		t.Fatalf("fetched %v, in one statement %v", byRange, oneStatement)
	}
	if g := spanGroup([]pageKey{{"a", t0.Add(time.Hour)}, {"b", t0}, {"c", t0.Add(time.Minute)}}); len(g.ranges) != 1 ||
		!g.ranges[0].From.Equal(t0.Add(-time.Millisecond)) || !g.ranges[0].To.Equal(t0.Add(time.Hour+time.Millisecond)) {
		t.Fatalf("span group %+v", g)
	}
}

func TestFetchGroups(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	keysAt := func(offsets ...time.Duration) []pageKey {
		out := make([]pageKey, len(offsets))
		for i, o := range offsets {
			out[i] = pageKey{id: fmt.Sprintf("c%d", i), started: t0.Add(o)}
		}
		return out
	}
	spread := func(n int) []pageKey {
		offsets := make([]time.Duration, n)
		for i := range offsets {
			offsets[i] = time.Duration(n-i) * time.Second // page order is not time order
		}
		return keysAt(offsets...)
	}
	cases := []struct {
		name   string
		keys   []pageKey
		groups int
	}{
		{"calls stored together: one range", keysAt(0, 100*time.Microsecond, 1500*time.Microsecond), 1},
		{"ties", keysAt(time.Second, time.Second, 0), 1},
		{"a range per call, one group", spread(maxFetchGroupRanges), 1},
		{"one range more: two groups", spread(maxFetchGroupRanges + 1), 2},
		{"as many ranges as fetched", spread(maxFetchRanges), maxFetchRanges / maxFetchGroupRanges},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			groups := fetchGroups(tc.keys)
			if len(groups) != tc.groups {
				t.Fatalf("%d groups, want %d", len(groups), tc.groups)
			}
			var ids []string
			for _, g := range groups {
				if len(g.ids) != len(g.ranges) {
					t.Fatalf("group with %d ids and %d ranges", len(g.ids), len(g.ranges))
				}
				for i, id := range g.ids {
					at := tc.keys[slices.IndexFunc(tc.keys, func(k pageKey) bool { return k.id == id })].started
					if at.Before(g.ranges[i].From) || at.After(g.ranges[i].To) {
						t.Fatalf("%s started %v, outside its range %v", id, at, g.ranges[i])
					}
				}
				ids = append(ids, g.ids...)
			}
			if len(ids) != len(tc.keys) {
				t.Fatalf("%d ids fetched of %d", len(ids), len(tc.keys))
			}
		})
	}
}
