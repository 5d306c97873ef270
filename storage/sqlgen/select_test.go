package sqlgen

import (
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func TestLimitOffset(t *testing.T)   { testLimitOffset(t, duckDBFixture(t), nil) }
func TestSelectColumns(t *testing.T) { testSelectColumns(t, duckDBFixture(t)) }
func TestProjection(t *testing.T)    { testProjection(t, duckDBFixture(t)) }
func TestStorageSizes(t *testing.T)  { testStorageSizes(t, duckDBFixture(t)) }

// pageCase is one page of the visible e/p calls. A non-nil sortBy marks a
// page whose order is not specified, so it is compared as a set.
type pageCase struct {
	limit, offset int64
	sortBy        []storage.SortBy
	want          []string
}

// testLimitOffset checks the default-order pages on e, then extra, the
// pages only some engines promise.
func testLimitOffset(t *testing.T, e engine, extra []pageCase) {
	tests := append([]pageCase{
		{2, 0, nil, []string{"c01", "c08"}},
		{2, 2, nil, []string{"c02", "c03"}},
		{0, 4, nil, []string{"c04", "c05"}},
		{-1, -1, nil, []string{"c01", "c08", "c02", "c03", "c04", "c05"}},
		{10, 6, nil, nil},
	}, extra...)
	for _, tt := range tests {
		st, err := CallsSelect(e.d, storage.CallsQuery{ProjectID: "e/p", Limit: tt.limit, Offset: tt.offset, SortBy: tt.sortBy})
		if err != nil {
			t.Fatal(err)
		}
		got := e.ids(t, st)
		if tt.sortBy != nil {
			got = sorted(got)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("limit %d offset %d sort %v: got %v; want %v", tt.limit, tt.offset, tt.sortBy, got, tt.want)
		}
	}
}

func testSelectColumns(t *testing.T, e engine) {
	st, err := CallsSelect(e.d, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{"c01"}}})
	if err != nil {
		t.Fatal(err)
	}
	rows := e.rows(t, st)
	if len(rows) != 1 {
		t.Fatalf("got %d rows", len(rows))
	}
	r := rows[0]
	want := map[string]any{
		"project_id": "e/p", "id": "c01", "trace_id": "t1", "thread_id": "th1", "turn_id": "c01",
		"op_name": opPredictV1, "display_name": "First Run", "started_at": at(time.Minute),
		"ended_at": at(time.Minute + 1500*time.Millisecond), "inputs": callFixtures()[0].inputs,
		"attributes": `{"env": "prod"}`, "wb_run_step": int64(1), "parent_id": nil, "exception": nil,
		"storage_size_bytes": nil, "total_storage_size_bytes": nil,
	}
	for col, v := range want {
		if got := r[col]; got != v {
			t.Errorf("%s = %#v; want %#v", col, got, v)
		}
	}
	if len(r) != len(CallColumns) {
		t.Errorf("got %d columns; want %d", len(r), len(CallColumns))
	}
}

// projectionCase names the columns a projection must select (kept) and
// leave NULL (null).
type projectionCase struct {
	name       string
	q          storage.CallsQuery
	kept, null []string
}

func projectionCases() []projectionCase {
	return []projectionCase{
		{"dotted and dump names", storage.CallsQuery{Columns: []string{"inputs.model", "output_dump"}},
			[]string{"id", "trace_id", "project_id", "op_name", "started_at", "inputs", "output"},
			[]string{"attributes", "summary", "otel_dump", "ended_at", "display_name", "thread_id", "wb_user_id"}},
		{"summary brings status inputs", storage.CallsQuery{Columns: []string{"summary"}},
			[]string{"summary", "ended_at", "display_name"}, []string{"inputs", "output", "attributes"}},
		{"costs bring summary", storage.CallsQuery{Columns: []string{"id"}, IncludeCosts: true},
			[]string{"summary", "ended_at", "display_name"}, []string{"inputs"}},
		{"attributes bring otel_dump", storage.CallsQuery{Columns: []string{"attributes"}},
			[]string{"attributes"}, []string{"inputs", "summary"}},
		{"nil means all", storage.CallsQuery{},
			[]string{"inputs", "output", "summary", "attributes", "display_name"}, nil},
	}
}

func testProjection(t *testing.T, e engine) {
	for _, tt := range projectionCases() {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.ProjectID = "e/p"
			tt.q.Filter.CallIDs = []string{"c01"}
			st, err := CallsSelect(e.d, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			r := e.rows(t, st)[0]
			for _, c := range tt.kept {
				if r[c] == nil {
					t.Errorf("%s is NULL; want it selected", c)
				}
			}
			for _, c := range tt.null {
				if r[c] != nil {
					t.Errorf("%s = %v; want NULL", c, r[c])
				}
			}
		})
	}
}

// size is the storage size of a fixture: the text length of its four
// JSON columns.
func size(c call) int64 {
	return int64(len(c.attributes) + len(c.inputs) + len(c.output) + len(c.summary))
}

func testStorageSizes(t *testing.T, e engine) {
	fx := map[string]call{}
	for _, c := range callFixtures() {
		fx[c.id] = c
	}
	q := storage.CallsQuery{ProjectID: "e/p", IncludeStorageSize: true, IncludeTotalStorageSize: true, Limit: 4}
	st, err := CallsSelect(e.d, q)
	if err != nil {
		t.Fatal(err)
	}
	traceT1 := size(fx["c01"]) + size(fx["c02"]) + size(fx["c05"]) // c06 deleted, c07 end-only
	want := map[string][2]any{
		"c01": {size(fx["c01"]), traceT1},
		"c08": {size(fx["c08"]), size(fx["c08"])},
		"c02": {size(fx["c02"]), nil},
		"c03": {size(fx["c03"]), size(fx["c03"])},
	}
	rows := e.rows(t, st)
	if len(rows) != 4 {
		t.Fatalf("got %d rows; want 4", len(rows))
	}
	for _, r := range rows {
		w := want[r["id"].(string)]
		if r["storage_size_bytes"] != w[0] || r["total_storage_size_bytes"] != w[1] {
			t.Errorf("%s: sizes %v, %v; want %v, %v", r["id"], r["storage_size_bytes"], r["total_storage_size_bytes"], w[0], w[1])
		}
	}
}
