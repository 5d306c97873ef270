package sqlgen

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// The tests below repeat the row-level DuckDB tests (count_test.go,
// select_test.go, errors_test.go, injection_test.go) on ClickHouse with the
// same fixtures and expected values.

func TestClickHouseCallsCount(t *testing.T) {
	conn := chFixtureDB(t)
	fx := map[string]call{}
	for _, c := range callFixtures() {
		fx[c.id] = c
	}
	t1 := size(fx["c01"]) + size(fx["c02"]) + size(fx["c05"])
	tests := []struct {
		name      string
		q         storage.CallsQuery
		limit     int64
		count     int64
		totalSize any
	}{
		{"all visible", storage.CallsQuery{}, 0, 6, nil},
		{"filter", storage.CallsQuery{Filter: storage.CallsFilter{TraceIDs: []string{"t1"}}}, 0, 3, nil},
		{"query", storage.CallsQuery{Where: where(eqq("summary.weave.status", `"success"`))}, 0, 3, nil},
		{"feedback query", storage.CallsQuery{Where: where(eqq("feedback.[*].payload.note", `"great"`))}, 0, 1, nil},
		{"capped by limit", storage.CallsQuery{}, 4, 4, nil},
		{"limit above count", storage.CallsQuery{}, 100, 6, nil},
		{"nothing", storage.CallsQuery{Filter: storage.CallsFilter{ThreadIDs: []string{}}}, 0, 0, nil},
		{"trace sizes of matching roots", storage.CallsQuery{Filter: storage.CallsFilter{TraceIDs: []string{"t1", "t2"}},
			IncludeTotalStorageSize: true}, 0, 4, t1 + size(fx["c03"])},
		{"trace sizes skip non-roots", storage.CallsQuery{Filter: storage.CallsFilter{CallIDs: []string{"c02", "c05"}},
			IncludeTotalStorageSize: true}, 0, 2, int64(0)},
		{"trace sizes with limit", storage.CallsQuery{Filter: storage.CallsFilter{CallIDs: []string{"c01"}},
			IncludeTotalStorageSize: true}, 1, 1, t1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.ProjectID = "e/p"
			st, err := CallsCount(NewClickHouse(), tt.q, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			rows := chRows(t, conn, st)
			if len(rows) != 1 {
				t.Fatalf("got %d rows; want 1", len(rows))
			}
			if got := rows[0]["count"]; got != tt.count {
				t.Errorf("count = %#v; want %d", got, tt.count)
			}
			if got := rows[0]["total_storage_size_bytes"]; got != tt.totalSize {
				t.Errorf("total_storage_size_bytes = %#v; want %#v", got, tt.totalSize)
			}
		})
	}
}

func TestClickHouseLimitOffset(t *testing.T) {
	conn := chFixtureDB(t)
	byKey := []string{"c01", "c08", "c02", "c03", "c04", "c05"} // by (anchor_at, id)
	tests := []struct {
		limit, offset int64
		sortBy        []storage.SortBy
		want          []string
	}{
		{2, 0, nil, []string{"c01", "c08"}},
		{2, 2, nil, []string{"c02", "c03"}},
		{0, 4, nil, []string{"c04", "c05"}},
		{-1, -1, nil, []string{"c01", "c08", "c02", "c03", "c04", "c05"}},
		{10, 6, nil, nil},
		// Unsorted pages are cut in page-key order on ClickHouse.
		{2, 0, []storage.SortBy{}, sorted(byKey[:2])},
		{3, 2, []storage.SortBy{}, sorted(byKey[2:5])},
	}
	for _, tt := range tests {
		st, err := CallsSelect(NewClickHouse(), storage.CallsQuery{ProjectID: "e/p", Limit: tt.limit, Offset: tt.offset, SortBy: tt.sortBy})
		if err != nil {
			t.Fatal(err)
		}
		got := chIDs(t, conn, st)
		if tt.sortBy != nil {
			got = sorted(got)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("limit %d offset %d sort %v: got %v; want %v", tt.limit, tt.offset, tt.sortBy, got, tt.want)
		}
	}
}

func TestClickHouseSelectColumns(t *testing.T) {
	conn := chFixtureDB(t)
	st, err := CallsSelect(NewClickHouse(), storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: []string{"c01"}}})
	if err != nil {
		t.Fatal(err)
	}
	rows := chRows(t, conn, st)
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

func TestClickHouseProjection(t *testing.T) {
	conn := chFixtureDB(t)
	tests := []struct {
		name       string
		q          storage.CallsQuery
		kept, null []string
	}{
		{"dotted and dump names", storage.CallsQuery{Columns: []string{"inputs.model", "output_dump"}},
			[]string{"id", "trace_id", "project_id", "op_name", "started_at", "inputs", "output"},
			[]string{"attributes", "summary", "otel_dump", "ended_at", "display_name", "thread_id", "wb_user_id"}},
		{"costs bring summary", storage.CallsQuery{Columns: []string{"id"}, IncludeCosts: true},
			[]string{"summary", "ended_at", "display_name"}, []string{"inputs"}},
		{"nil means all", storage.CallsQuery{},
			[]string{"inputs", "output", "summary", "attributes", "display_name"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.ProjectID = "e/p"
			tt.q.Filter.CallIDs = []string{"c01"}
			st, err := CallsSelect(NewClickHouse(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			r := chRows(t, conn, st)[0]
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

func TestClickHouseStorageSizes(t *testing.T) {
	conn := chFixtureDB(t)
	fx := map[string]call{}
	for _, c := range callFixtures() {
		fx[c.id] = c
	}
	q := storage.CallsQuery{ProjectID: "e/p", IncludeStorageSize: true, IncludeTotalStorageSize: true, Limit: 4}
	st, err := CallsSelect(NewClickHouse(), q)
	if err != nil {
		t.Fatal(err)
	}
	traceT1 := size(fx["c01"]) + size(fx["c02"]) + size(fx["c05"])
	want := map[string][2]any{
		"c01": {size(fx["c01"]), traceT1},
		"c08": {size(fx["c08"]), size(fx["c08"])},
		"c02": {size(fx["c02"]), nil},
		"c03": {size(fx["c03"]), size(fx["c03"])},
	}
	rows := chRows(t, conn, st)
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

func TestClickHouseNullQueryAndScope(t *testing.T) {
	conn := chFixtureDB(t)
	for _, raw := range []json.RawMessage{nil, json.RawMessage("null")} {
		st, err := CallsSelect(NewClickHouse(), storage.CallsQuery{ProjectID: "e/p", Where: raw})
		if err != nil {
			t.Fatal(err)
		}
		if got := chIDs(t, conn, st); len(got) != 6 {
			t.Errorf("query %q returned %v; want all 6 visible calls", raw, got)
		}
	}
	st, err := CallsSelect(NewClickHouse(), storage.CallsQuery{ProjectID: "e/other", Where: where(eqq("inputs.n", "5"))})
	if err != nil {
		t.Fatal(err)
	}
	if got := chIDs(t, conn, st); !slices.Equal(got, []string{"x01"}) {
		t.Errorf("e/other sees %v; want [x01]", got)
	}
}

// TestClickHouseUserValuesAreBound runs the hostile query of the DuckDB
// injection test on ClickHouse.
func TestClickHouseUserValuesAreBound(t *testing.T) {
	conn := chFixtureDB(t)
	d := NewClickHouse()
	q := hostileQuery()
	sel, err := CallsSelect(d, q)
	if err != nil {
		t.Fatal(err)
	}
	count, err := CallsCount(d, q, 7)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	threads, err := ThreadsSelect(d, ThreadsQuery{ProjectID: evil, ThreadIDs: []string{evil}, AfterDatetime: &now, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]Statement{"select": sel, "count": count, "threads": threads} {
		if strings.Contains(st.SQL, "DROP") || strings.Contains(st.SQL, evil) {
			t.Errorf("%s: user value spliced into SQL: %s", name, st.SQL)
		}
		if len(st.Args) == 0 || st.Args[0] != evil || !strings.Contains(st.SQL, "project_id = "+d.Param(1, TypeString)) {
			t.Errorf("%s: the project is not the first argument and predicate", name)
		}
		if rows := chRows(t, conn, st); len(rows) > 1 {
			t.Errorf("%s: hostile query matched %d rows", name, len(rows))
		}
	}
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM calls").Scan(&n); err != nil || n != uint64(len(callFixtures())) {
		t.Fatalf("calls table damaged: %d rows, %v", n, err)
	}
}
