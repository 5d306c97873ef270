package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// olderThan is the query the web UI sends for the page after a row of
// the default order (started_at desc, id desc): calls started before it,
// or at the same microsecond with a smaller id. It uses only Weave's
// operators ($not of $gte for "less than"); the started_at <= bound is
// redundant, for stores that skip blocks by a column's range.
func olderThan(t *testing.T, at time.Time, id string) querylang.Expr {
	t.Helper()
	ts, _ := json.Marshal(at.UTC().Format(time.RFC3339Nano))
	idLit, _ := json.Marshal(id)
	before := fmt.Sprintf(`{"$not":[{"$gte":[{"$getField":"started_at"},{"$literal":%s}]}]}`, ts)
	raw := fmt.Sprintf(`{"$expr":{"$and":[{"$not":[{"$gt":[{"$getField":"started_at"},{"$literal":%s}]}]},`+
		`{"$or":[%s,{"$and":[{"$eq":[{"$getField":"started_at"},{"$literal":%s}]},`+
		`{"$not":[{"$gte":[{"$getField":"id"},{"$literal":%s}]}]}]}]}]}}`, ts, before, ts, idLit)
	e, err := querylang.Parse(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", raw, err)
	}
	return e
}

// testKeysetPaging pages the default order by cursor: every call once, in
// the order one query would give, across ties of started_at and
// microseconds apart, with a filter alongside.
func testKeysetPaging(t *testing.T, s callStore) {
	var ops []storage.CallOp
	for i := range 9 {
		at := base.Add(time.Duration(i/3) * time.Microsecond) // three calls per microsecond
		ops = append(ops, start("e/p", fmt.Sprintf("c%d", i), "t", "", "op", at))
	}
	ops = append(ops, start("e/p", "x", "t", "", "other", base.Add(time.Microsecond)), start("e/q", "c0q", "t", "", "op", base))
	write(t, s, ops...)
	desc := []storage.SortBy{{Field: "started_at", Direction: "desc"}, {Field: "id", Direction: "desc"}}
	q := storage.CallsQuery{ProjectID: "e/p", SortBy: desc, Filter: storage.CallsFilter{OpNames: []string{"op"}}}
	want := ids(query(t, s, q))
	if !slices.Equal(want, []string{"c8", "c7", "c6", "c5", "c4", "c3", "c2", "c1", "c0"}) {
		t.Fatalf("one query = %v", want)
	}
	var got []string
	q.Limit = 2
	for range 10 {
		page := query(t, s, q)
		got = append(got, ids(page)...)
		if len(page) < 2 {
			break
		}
		last := page[len(page)-1]
		q.Where = olderThan(t, last.StartedAt, last.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages by cursor = %v, want %v", got, want)
	}
}
