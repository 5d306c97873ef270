package storekit

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/weftdev/weft/storage"
)

// fakeTable serves one table's pages from a digest list and stored rows.
type fakeTable struct {
	list    []string
	stored  map[string]string
	natural int // NaturalPage calls
}

func (f *fakeTable) NaturalPage(_ context.Context, _, _ string, offset, limit int64) ([]TableEntry, error) {
	f.natural++
	end := int64(len(f.list))
	if limit >= 0 {
		end = min(end, offset+limit)
	}
	if offset >= end {
		return nil, nil
	}
	page := PageEntries(f.list[offset:end], offset)
	FillEntries(page, f.stored)
	return page, nil
}

func (f *fakeTable) FilteredEntries(_ context.Context, req storage.TableQueryReq) ([]TableEntry, error) {
	entries := SelectEntries(f.list, req.Filter)
	FillEntries(entries, f.stored)
	return entries, nil
}

// testTable lists d1 twice; rows differ in n (missing, a number, a
// boolean) and s (text, an object).
func testTable() *fakeTable {
	return &fakeTable{list: []string{"d0", "d1", "d2", "d1", "d3"}, stored: map[string]string{
		"d0": `{"n": 2, "s": "b"}`, "d1": `{"n": 1, "s": "a"}`, "d2": `{"s": "c"}`, "d3": `{"n": true, "s": {"x": 1}}`,
	}}
}

func TestQueryTable(t *testing.T) {
	ptr := func(n int64) *int64 { return &n }
	cases := []struct {
		name  string
		req   storage.TableQueryReq
		want  []int64 // original indexes
		holes bool    // the table lists a digest never stored
	}{
		{"all in order", storage.TableQueryReq{}, []int64{0, 1, 2, 3, 4}, false},
		{"page", storage.TableQueryReq{Limit: ptr(2), Offset: ptr(1)}, []int64{1, 2}, false},
		{"negative limit is none", storage.TableQueryReq{Limit: ptr(-1), Offset: ptr(3)}, []int64{3, 4}, false},
		{"offset past end", storage.TableQueryReq{Offset: ptr(9)}, nil, false},
		{"filter", storage.TableQueryReq{Filter: &storage.TableRowFilter{RowDigests: []string{"d1"}}}, []int64{1, 3}, false},
		{"sort asc, ties in table order", storage.TableQueryReq{SortBy: []storage.SortBy{{Field: "n", Direction: "asc"}}},
			[]int64{2, 1, 3, 4, 0}, false},
		{"sort desc, ties in table order", storage.TableQueryReq{SortBy: []storage.SortBy{{Field: "n", Direction: "DESC"}}},
			[]int64{0, 1, 3, 4, 2}, false},
		{"sort text", storage.TableQueryReq{SortBy: []storage.SortBy{{Field: "s", Direction: "asc"}}}, []int64{1, 3, 0, 2, 4}, false},
		{"hole skipped in natural page", storage.TableQueryReq{Limit: ptr(2), Offset: ptr(1)}, []int64{2, 3}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := testTable()
			if c.holes {
				f.list = slices.Insert(f.list, 1, "never")
			}
			res, err := QueryTable(context.Background(), f, c.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range res.Rows {
				got = append(got, r.OriginalIndex)
				if string(r.Val) != f.stored[r.Digest] {
					t.Errorf("row %s = %s", r.Digest, r.Val)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("indexes = %v; want %v", got, c.want)
			}
		})
	}
}

func TestQueryTableRefusals(t *testing.T) {
	neg := int64(-1)
	cases := map[string]storage.TableQueryReq{
		"negative offset": {Offset: &neg},
		"bad direction":   {SortBy: []storage.SortBy{{Field: "n", Direction: "up"}}},
		"empty path part": {SortBy: []storage.SortBy{{Field: "a..b", Direction: "asc"}}},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := QueryTable(context.Background(), &fakeTable{}, req); !errors.Is(err, storage.ErrInvalidArgument) {
				t.Errorf("err = %v; want ErrInvalidArgument", err)
			}
		})
	}
}

func TestRankValue(t *testing.T) {
	cases := []struct {
		raw  string
		path []string
		want sortValue
	}{
		{`{"a": null}`, []string{"a"}, sortValue{}},
		{`{}`, []string{"a"}, sortValue{}},
		{`{"a": false}`, []string{"a"}, sortValue{rank: 1}},
		{`{"a": true}`, []string{"a"}, sortValue{rank: 1, num: 1}},
		{`{"a": -2.5}`, []string{"a"}, sortValue{rank: 1, num: -2.5}},
		{`{"a": "x"}`, []string{"a"}, sortValue{rank: 2, text: "x"}},
		{`{"a": {"b": [1, 2]}}`, []string{"a"}, sortValue{rank: 2, text: `{"b":[1,2]}`}},
		{`{"a": [5, 6]}`, []string{"a", "1"}, sortValue{rank: 1, num: 6}},
		{`{"a": [5, 6]}`, []string{"a", "2"}, sortValue{}},
		{`{"a": [5, 6]}`, []string{"a", "x"}, sortValue{}},
	}
	for _, c := range cases {
		if got := extractSortValue([]byte(c.raw), c.path); got != c.want {
			t.Errorf("%s at %v = %+v; want %+v", c.raw, c.path, got, c.want)
		}
	}
}

func TestStatsInOrder(t *testing.T) {
	found := map[string]storage.TableStatsRow{"a": {Digest: "a", Count: 1}, "b": {Digest: "b", Count: 2}}
	res := StatsInOrder([]string{"b", "missing", "a"}, found)
	if len(res.Tables) != 2 || res.Tables[0].Digest != "b" || res.Tables[1].Digest != "a" {
		t.Errorf("tables = %+v", res.Tables)
	}
	if res := StatsInOrder(nil, nil); res.Tables == nil {
		t.Error("no tables must be an empty list, not null")
	}
}
