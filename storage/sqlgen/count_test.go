package sqlgen

import (
	"testing"

	"github.com/weftdev/weft/storage"
)

func TestCallsCount(t *testing.T) { testCallsCount(t, duckDBFixture(t)) }

// countCase is a count query with its limit and expected answer.
type countCase struct {
	name      string
	q         storage.CallsQuery
	limit     int64
	count     int64
	totalSize any
}

func countCases() []countCase {
	fx := map[string]call{}
	for _, c := range callFixtures() {
		fx[c.id] = c
	}
	t1 := size(fx["c01"]) + size(fx["c02"]) + size(fx["c05"])
	return []countCase{
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
}

func testCallsCount(t *testing.T, e engine) {
	for _, tt := range countCases() {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.ProjectID = "e/p"
			st, err := CallsCount(e.d, tt.q, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			rows := e.rows(t, st)
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
