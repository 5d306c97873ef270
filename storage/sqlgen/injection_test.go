package sqlgen

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

const evil = `'; DROP TABLE calls; --`

// hostileQuery puts evil everywhere a calls query takes a user value.
func hostileQuery() storage.CallsQuery {
	lit, _ := json.Marshal(evil)
	path, _ := json.Marshal("inputs." + evil)
	fb, _ := json.Marshal("feedback.[" + evil + "].payload." + evil)
	return storage.CallsQuery{
		ProjectID: evil,
		Where: where(`{"$or":[{"$eq":[{"$getField":"op_name"},{"$literal":` + string(lit) + `}]},` +
			`{"$contains":{"input":{"$getField":` + string(path) + `},"substr":{"$literal":` + string(lit) + `}}},` +
			`{"$eq":[{"$getField":` + string(fb) + `},{"$literal":` + string(lit) + `}]},` +
			`{"$gt":[{"$getField":"started_at"},{"$literal":` + string(lit) + `}]}]}`),
		Filter: storage.CallsFilter{
			OpNames: []string{evil, evil + ":*"}, InputRefs: []string{evil, evil + ":*"}, OutputRefs: []string{evil},
			ParentIDs: []string{evil}, TraceIDs: []string{evil}, CallIDs: []string{evil}, ThreadIDs: []string{evil},
			TurnIDs: []string{evil}, WBUserIDs: []string{evil}, WBRunIDs: []string{evil},
		},
		SortBy: []storage.SortBy{{Field: "inputs." + evil, Direction: "desc"}},
		Limit:  5, Offset: 1, IncludeStorageSize: true, IncludeTotalStorageSize: true,
	}
}

// checkBound asserts evil reached st only as an argument, the project id
// is the first argument and predicate, and the statement runs on e.
func checkBound(t *testing.T, e engine, name string, st Statement) {
	t.Helper()
	if strings.Contains(st.SQL, "DROP") || strings.Contains(st.SQL, evil) {
		t.Errorf("%s: user value spliced into SQL: %s", name, st.SQL)
	}
	if len(st.Args) == 0 || st.Args[0] != evil {
		t.Errorf("%s: first argument is %v; want the project id", name, st.Args)
	}
	if !strings.Contains(st.SQL, "project_id = "+e.d.Param(1, TypeString)) {
		t.Errorf("%s: no project predicate on the first argument", name)
	}
	if rows := e.rows(t, st); len(rows) > 1 {
		t.Errorf("%s: hostile query matched %d rows", name, len(rows))
	}
}

// TestUserValuesAreBound checks that hostile strings reach the database
// only as arguments, for every statement kind.
func TestUserValuesAreBound(t *testing.T) { testUserValuesAreBound(t, duckDBFixture(t)) }

func testUserValuesAreBound(t *testing.T, e engine) {
	q := hostileQuery()
	st, err := CallsSelect(e.d, q)
	if err != nil {
		t.Fatal(err)
	}
	checkBound(t, e, "select", st)
	if st, err = CallsCount(e.d, q, 7); err != nil {
		t.Fatal(err)
	}
	checkBound(t, e, "count", st)
	now := time.Now()
	if st, err = ThreadsSelect(e.d, storage.ThreadsQuery{ProjectID: evil, ThreadIDs: []string{evil},
		AfterDatetime: &now, Limit: 3}); err != nil {
		t.Fatal(err)
	}
	checkBound(t, e, "threads", st)
	agg := storage.CallsAggregateQuery{Calls: q, Start: now.Add(-time.Hour), End: now, BucketSeconds: 60}
	for name, render := range map[string]func(Dialect, storage.CallsAggregateQuery) (Statement, error){
		"aggregate buckets": AggregateBuckets, "aggregate usage": AggregateUsage,
	} {
		if st, err = render(e.d, agg); err != nil {
			t.Fatal(err)
		}
		checkBound(t, e, name, st)
	}
	rows := e.rows(t, Statement{SQL: "SELECT count(*) AS n FROM calls"})
	if n := rows[0]["n"]; n != int64(len(callFixtures())) {
		t.Fatalf("calls table damaged: %#v rows", n)
	}
}

// TestProjectScope checks that the same query on another project sees only
// that project's rows.
func TestProjectScope(t *testing.T) { testProjectScope(t, duckDBFixture(t)) }

func testProjectScope(t *testing.T, e engine) {
	st, err := CallsSelect(e.d, storage.CallsQuery{ProjectID: "e/other",
		Where: where(eqq("inputs.n", "5"))})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.ids(t, st); len(got) != 1 || got[0] != "x01" {
		t.Errorf("e/other sees %v; want [x01]", got)
	}
}
