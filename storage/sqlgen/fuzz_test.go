package sqlgen

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// FuzzCallsSelect feeds random query documents and sort fields through the
// compiler and runs every accepted statement on DuckDB: the compiler must
// not panic, must reject with a storage error kind, and must never produce
// SQL the database refuses.
func FuzzCallsSelect(f *testing.F) {
	for i, s := range fuzzSeeds() {
		sorts := []string{"started_at", "inputs.n", "feedback.[score].payload.value", "summary.weave.status", "", "id"}
		f.Add([]byte(`{"$expr":`+s+`}`), sorts[i%len(sorts)], i%2 == 0)
	}
	db := fixtureDB(f)
	f.Fuzz(func(t *testing.T, doc []byte, sortField string, desc bool) {
		fuzzOne(t, db, doc, sortField, desc)
	})
}

// fuzzSeeds are operations touching every field kind, operator and cast.
func fuzzSeeds() []string {
	return []string{
		eqq("op_name", `"x"`), eqq("inputs.n", "5"), eqq("inputs.n", "2.5"), eqq("inputs.flag", "true"),
		eqq("started_at", `"2024-01-01T00:00:00Z"`), eqq("started_at", "1700000000.5"), eqq("ended_at", "null"),
		eqq("summary.weave.status", `"error"`), eqq("summary.weave.latency_ms", "100"),
		eqq("summary.weave.trace_name", `"predict"`), eqq("feedback.[*].payload.note", `"great"`),
		eqq("feedback.[score].payload.value", "0.5"), eqq("feedback.[x].runnable_ref", `"r"`),
		eqq(`inputs.a\.b.0`, `"x"`), eqq("wb_run_step", "true"), eqq("input_refs", `"r"`),
		`{"$in":[{"$getField":"inputs.n"},[{"$literal":1},{"$literal":2.5},{"$literal":null}]]}`,
		`{"$in":[{"$getField":"started_at"},[{"$literal":"2024-01-01"},{"$literal":0}]]}`,
		`{"$not":[{"$and":[{"$gt":[{"$getField":"wb_run_step"},{"$literal":1}]},{"$lt":[{"$literal":1},{"$literal":2}]}]}]}`,
		`{"$or":[{"$contains":{"input":{"$getField":"display_name"},"substr":{"$literal":"a"},"case_insensitive":true}},{"$getField":"inputs.x"}]}`,
		`{"$containsToken":{"input":{"$getField":"output"},"substr":{"$getField":"op_name"}}}`,
		`{"$eq":[{"$convert":{"input":{"$getField":"inputs.n"},"to":"bool"}},{"$convert":{"input":{"$literal":1.5},"to":"string"}}]}`,
		`{"$gte":[{"$convert":{"input":{"$gt":[{"$literal":1},{"$literal":0}]},"to":"int"}},{"$convert":{"input":{"$getField":"ended_at"},"to":"exists"}}]}`,
		`{"$and":[{"$literal":"x"},{"$literal":0},{"$literal":null},{"$getField":"started_at"},{"$getField":"input_refs"}]}`,
		`{"$in":[{"$getField":"inputs.model"},[{"$literal":"gpt-4"},{"$literal":"a b"}]]}`,
		`{"$contains":{"input":{"$getField":"output"},"substr":{"$literal":"Hello"},"case_insensitive":true}}`,
	}
}

// fuzzOne runs one fuzz input through CallsSelect and CallsCount.
func fuzzOne(t *testing.T, db *sql.DB, doc []byte, sortField string, desc bool) {
	d := NewDuckDB()
	expr, err := querylang.Parse(doc)
	if err != nil {
		if !errors.Is(err, storage.ErrInvalidArgument) {
			t.Fatalf("parse error of no storage kind: %v", err)
		}
		return
	}
	q := storage.CallsQuery{ProjectID: "e/p", Where: expr, Limit: 3, IncludeStorageSize: true, IncludeTotalStorageSize: desc}
	if sortField != "" {
		dir := "asc"
		if desc {
			dir = "desc"
		}
		q.SortBy = []storage.SortBy{{Field: sortField, Direction: dir}}
	}
	st, err := CallsSelect(d, q)
	if err != nil {
		if !errors.Is(err, storage.ErrInvalidArgument) && !errors.Is(err, storage.ErrFieldNotAllowed) {
			t.Fatalf("error of no storage kind: %v", err)
		}
		return
	}
	queryRows(t, db, st)
	if st, err = CallsCount(d, q, 2); err != nil {
		t.Fatalf("CallsSelect accepted what CallsCount rejects: %v", err)
	}
	queryRows(t, db, st)
}
