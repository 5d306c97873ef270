package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

func i64p(v int64) *int64 { return &v }

func testTblCreateFromDigests(t *testing.T, s storage.TableStore) {
	ctx := context.Background()
	a := tblCreate(t, s, projA, `[{"n": 0}, {"n": 1}]`)
	b := tblCreate(t, s, projA, `[{"n": 2}]`)
	ghost := strings.Repeat("G", 43)
	list := []string{a.RowDigests[1], ghost, b.RowDigests[0], a.RowDigests[0]}
	res, err := s.CreateTableFromDigests(ctx, storage.TableCreateFromDigestsReq{ProjectID: projA, RowDigests: list})
	if err != nil || res.Digest != digest.TableDigest(list) {
		t.Fatalf("create_from_digests = %+v, %v", res, err)
	}
	// Rows never stored are skipped and do not count toward pages.
	q := storage.TableQueryReq{ProjectID: projA, Digest: res.Digest}
	if got := tblIndexes(tblQuery(t, s, q)); got != "0,2,3" {
		t.Fatalf("rows = %s, want 0,2,3", got)
	}
	q.Offset, q.Limit = i64p(1), i64p(2)
	if got := tblIndexes(tblQuery(t, s, q)); got != "2,3" {
		t.Fatalf("page = %s, want 2,3", got)
	}
	stats, err := s.QueryTableStats(ctx, storage.TableQueryStatsReq{ProjectID: projA, Digest: res.Digest})
	if err != nil || stats.Count != 4 {
		t.Fatalf("stats = %+v, %v; the count is the list length", stats, err)
	}
	wrong := digest.EmptyTableDigest
	_, err = s.CreateTableFromDigests(ctx, storage.TableCreateFromDigestsReq{ProjectID: projA, RowDigests: list, ExpectedDigest: &wrong})
	wantKind(t, "mismatching expected_digest", err, storage.ErrConflict)
}

func testTblQueryFilterAndPaging(t *testing.T, s storage.TableStore) {
	tbl := tblCreate(t, s, projA, `[{"n": 0}, {"n": 1}, {"n": 2}, {"n": 1}, {"n": 4}]`)
	tests := []struct {
		name string
		req  storage.TableQueryReq
		want string
	}{
		{"all, with a repeated row", storage.TableQueryReq{}, "0,1,2,3,4"},
		{"filter", storage.TableQueryReq{Filter: &storage.TableRowFilter{RowDigests: []string{tbl.RowDigests[1], tbl.RowDigests[4]}}}, "1,3,4"},
		{"empty filter", storage.TableQueryReq{Filter: &storage.TableRowFilter{}}, "0,1,2,3,4"},
		{"limit", storage.TableQueryReq{Limit: i64p(2)}, "0,1"},
		{"offset", storage.TableQueryReq{Offset: i64p(3)}, "3,4"},
		{"offset past end", storage.TableQueryReq{Offset: i64p(9)}, ""},
		{"filtered page", storage.TableQueryReq{Filter: &storage.TableRowFilter{RowDigests: []string{tbl.RowDigests[1], tbl.RowDigests[4]}},
			Offset: i64p(1), Limit: i64p(1)}, "3"},
	}
	for _, tt := range tests {
		tt.req.ProjectID, tt.req.Digest = projA, tbl.Digest
		if got := tblIndexes(tblQuery(t, s, tt.req)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
	if rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: digest.EmptyTableDigest}); len(rows) != 0 {
		t.Fatalf("unknown table gave %d rows", len(rows))
	}
}

func testTblQuerySort(t *testing.T, s storage.TableStore) {
	tbl := tblCreate(t, s, projA, `[
		{"id": 0, "v": "b", "m": {"x": 2}, "l": [3, "z"]},
		{"id": 1, "v": 10, "m": {"x": "a"}, "l": [1]},
		{"id": 2, "m": {"x": null}, "l": []},
		{"id": 3, "v": "a", "m": {"x": 1.5}, "l": [2, "y"]},
		{"id": 4, "v": true, "m": {"x": 2}, "l": {"0": 9}},
		{"id": 5, "v": {"k": 1}, "m": {"y": 1}},
		{"id": 6, "v": 2.5, "m": {"x": [1]}, "l": [0]}]`)
	sortBy := func(terms ...string) []storage.SortBy {
		var out []storage.SortBy
		for _, term := range terms {
			field, dir, _ := strings.Cut(term, " ")
			out = append(out, storage.SortBy{Field: field, Direction: dir})
		}
		return out
	}
	tests := []struct {
		terms []string
		want  string
	}{
		// null/missing < numbers (true is 1) < strings and minified JSON.
		{[]string{"v asc"}, "2,4,6,1,3,0,5"},
		{[]string{"v desc"}, "5,0,3,1,6,4,2"},
		{[]string{"m.x asc"}, "2,5,3,0,4,6,1"},
		{[]string{"m.x desc", "id desc"}, "1,6,4,0,3,5,2"},
		{[]string{"l.0 asc"}, "2,5,6,1,3,0,4"},
		{[]string{"l.1 desc"}, "0,3,1,2,4,5,6"},
	}
	for _, tt := range tests {
		rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: tbl.Digest, SortBy: sortBy(tt.terms...)})
		if got := tblIndexes(rows); got != tt.want {
			t.Errorf("sort %v: %s, want %s", tt.terms, got, tt.want)
		}
	}
	page := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: tbl.Digest, SortBy: sortBy("v desc"),
		Offset: i64p(2), Limit: i64p(3)})
	if got := tblIndexes(page); got != "3,1,6" {
		t.Errorf("sorted page: %s, want 3,1,6", got)
	}
}

func testTblQuerySortRules(t *testing.T, s storage.TableStore) {
	tbl := tblCreate(t, s, projA, `[{"a": 1}]`)
	for _, field := range []string{"", " ", ".a", "a.", "a..b", "a. .b"} {
		_, err := s.QueryTable(context.Background(), storage.TableQueryReq{ProjectID: projA, Digest: tbl.Digest,
			SortBy: []storage.SortBy{{Field: field, Direction: "asc"}}})
		wantKind(t, fmt.Sprintf("sort field %q", field), err, storage.ErrInvalidArgument)
	}
	_, err := s.QueryTable(context.Background(), storage.TableQueryReq{ProjectID: projA, Digest: tbl.Digest,
		SortBy: []storage.SortBy{{Field: "a", Direction: "sideways"}}})
	wantKind(t, "sort direction", err, storage.ErrInvalidArgument)
}

func testTblStats(t *testing.T, s storage.TableStore) {
	ctx := context.Background()
	rows := `[{"b": "é", "a": [1, 2.50]}, {"x": null}, {"b": "é", "a": [1, 2.50]}]`
	tbl := tblCreate(t, s, projA, rows)
	one := tblCreate(t, s, projA, `[{"x": null}]`)
	var want int64
	for _, r := range tblRows(t, rows) {
		d, err := digest.Dumps(r, digest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want += int64(len(d.Text)) // Python json.dumps(row) length, repeats included
	}
	stats, err := s.QueryTableStats(ctx, storage.TableQueryStatsReq{ProjectID: projA, Digest: tbl.Digest})
	if err != nil || stats.Count != 3 {
		t.Fatalf("stats = %+v, %v", stats, err)
	}
	stats, err = s.QueryTableStats(ctx, storage.TableQueryStatsReq{ProjectID: projA, Digest: digest.EmptyTableDigest})
	if err != nil || stats.Count != 0 {
		t.Fatalf("unknown table stats = %+v, %v", stats, err)
	}
	batch, err := s.QueryTableStatsBatch(ctx, storage.TableQueryStatsBatchReq{ProjectID: projA,
		Digests: []string{one.Digest, digest.EmptyTableDigest, tbl.Digest}, IncludeStorageSize: true})
	if err != nil || len(batch.Tables) != 2 {
		t.Fatalf("batch = %+v, %v", batch, err)
	}
	first, second := batch.Tables[0], batch.Tables[1]
	if first.Digest != one.Digest || first.Count != 1 || *first.StorageSizeBytes != int64(len(`{"x": null}`)) ||
		second.Digest != tbl.Digest || second.Count != 3 || *second.StorageSizeBytes != want {
		t.Fatalf("batch = %+v %+v, want sizes %d and %d", first, second, len(`{"x": null}`), want)
	}
	plain, err := s.QueryTableStatsBatch(ctx, storage.TableQueryStatsBatchReq{ProjectID: projA, Digests: []string{tbl.Digest}})
	if err != nil || len(plain.Tables) != 1 || plain.Tables[0].StorageSizeBytes != nil {
		t.Fatalf("batch without sizes = %+v, %v", plain, err)
	}
}

func testTblLarge(t *testing.T, s storage.TableStore) {
	const n = 2500 // crosses any backend's insert chunking
	rows := make([]json.RawMessage, n)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(`{"i": %d, "half": %d}`, i, i/2))
	}
	res, err := s.CreateTable(context.Background(), storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: projA, Rows: rows}})
	if err != nil || len(res.RowDigests) != n {
		t.Fatalf("create %d rows: %v", n, err)
	}
	page := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: res.Digest, Offset: i64p(2400), Limit: i64p(50)})
	if len(page) != 50 || page[0].OriginalIndex != 2400 || string(page[49].Val) != `{"i": 2449, "half": 1224}` {
		t.Fatalf("page = %d rows from %d", len(page), page[0].OriginalIndex)
	}
	sorted := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: res.Digest, Limit: i64p(3),
		SortBy: []storage.SortBy{{Field: "half", Direction: "desc"}, {Field: "i", Direction: "asc"}}})
	if tblIndexes(sorted) != "2498,2499,2496" {
		t.Fatalf("sorted = %s", tblIndexes(sorted))
	}
}
