package sqlgen

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

func TestQueryErrors(t *testing.T) {
	tests := []struct {
		name    string
		where   string
		sortBy  []storage.SortBy
		kind    error
		mention string
	}{
		{name: "unknown plain field", where: eqq("colour", `"red"`), kind: storage.ErrFieldNotAllowed, mention: `"colour"`},
		{name: "dotted plain field", where: eqq("op_name.x", `"a"`), kind: storage.ErrFieldNotAllowed, mention: `"op_name.x"`},
		{name: "unknown summary.weave field", where: eqq("summary.weave.costs", `1`), kind: storage.ErrFieldNotAllowed, mention: "summary.weave.costs"},
		{name: "storage size not filterable", where: eqq("storage_size_bytes", `1`), kind: storage.ErrFieldNotAllowed, mention: "storage_size_bytes"},
		{name: "total storage size not filterable", where: eqq("total_storage_size_bytes", `1`), kind: storage.ErrFieldNotAllowed, mention: "total_storage_size_bytes"},
		{name: "malformed feedback field", where: eqq("feedback.score.payload", `1`), kind: storage.ErrFieldNotAllowed, mention: "feedback.score.payload"},
		{name: "feedback column unknown", where: eqq("feedback.[x].creator", `1`), kind: storage.ErrFieldNotAllowed, mention: "feedback.[x].creator"},
		{name: "annotation queues unsupported", where: eqq("annotation_queue_items.queue_id", `"q"`), kind: storage.ErrFieldNotAllowed, mention: "annotation_queue_items.queue_id"},
		{name: "field inside a mismatch is still checked", where: eqq2(`{"$convert":{"input":{"$getField":"bogus"},"to":"int"}}`, `"x"`), kind: storage.ErrFieldNotAllowed, mention: "bogus"},
		{name: "object literal", where: `{"$eq":[{"$getField":"inputs"},{"$literal":{"a":{"$literal":1}}}]}`, kind: storage.ErrInvalidArgument, mention: "literals"},
		{name: "array literal", where: `{"$eq":[{"$getField":"inputs"},{"$literal":[]}]}`, kind: storage.ErrInvalidArgument, mention: "literals"},
		{name: "syntax error", where: `{"$eq":[{"$getField":"id"}]}`, kind: storage.ErrInvalidArgument, mention: "query.$expr.$eq"},
		{name: "bad direction", sortBy: sortBy("started_at", "up"), kind: storage.ErrInvalidArgument, mention: "sort_by[0].direction"},
		{name: "empty direction", sortBy: sortBy("id", "asc", "op_name", ""), kind: storage.ErrInvalidArgument, mention: "sort_by[1].direction"},
		{name: "unknown sort field", sortBy: sortBy("id", "asc", "colour", "asc"), kind: storage.ErrFieldNotAllowed, mention: "sort_by[1].field"},
		{name: "unknown summary.weave sort field", sortBy: sortBy("summary.weave.tokens", "desc"), kind: storage.ErrFieldNotAllowed, mention: `"summary.weave.tokens"`},
		{name: "storage size not sortable", sortBy: sortBy("storage_size_bytes", "asc"), kind: storage.ErrFieldNotAllowed, mention: "storage_size_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := storage.CallsQuery{ProjectID: "e/p", SortBy: tt.sortBy}
			var err error
			if tt.where != "" {
				q.Where, err = parseWhere(tt.where)
			}
			if err == nil {
				_, err = CallsSelect(NewDuckDB(), q)
			}
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("got %v; want %v mentioning %q", err, tt.kind, tt.mention)
			}
			if tt.sortBy != nil || q.Where == nil {
				return
			}
			if _, err := CallsCount(NewDuckDB(), q, 0); !errors.Is(err, tt.kind) {
				t.Errorf("CallsCount: got %v; want %v", err, tt.kind)
			}
		})
	}
}

func TestNullQueryMeansNoQuery(t *testing.T) { testNullQuery(t, duckDBFixture(t)) }

func testNullQuery(t *testing.T, e engine) {
	for _, raw := range []json.RawMessage{nil, json.RawMessage("null")} {
		expr, err := querylang.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		st, err := CallsSelect(e.d, storage.CallsQuery{ProjectID: "e/p", Where: expr})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.ids(t, st); len(got) != 6 {
			t.Errorf("query %q returned %v; want all 6 visible calls", raw, got)
		}
	}
}
