package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

// Rows recorded from the TypeScript client with the row digests answered.
const tblSampleRows = `[{"question": "capital of France?", "expected": "Paris"}, {"question": "2+2?", "expected": "4"}]`

var tblSampleDigests = []string{"vPUKZK2D4ftkJalwTCX3pJ2cWAHs7ncX6iB3suIoYqs", "7DGfSVlKzNoxQd3Xa3jGXXTXOuGhI9jWQCttH96cOqw"}

// runTables runs every tables case, each against a fresh store. The ref
// cases also need the store to be a storage.ObjectStore.
func runTables(t *testing.T, newStore func(t *testing.T) storage.TableStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.TableStore)
	}{
		{"CreateMatchesClientDigests", testTblCreateDigests},
		{"CreateRules", testTblCreateRules},
		{"Update", testTblUpdate},
		{"UpdateRules", testTblUpdateRules},
		{"CreateFromDigests", testTblCreateFromDigests},
		{"QueryFilterAndPaging", testTblQueryFilterAndPaging},
		{"QuerySort", testTblQuerySort},
		{"QuerySortRules", testTblQuerySortRules},
		{"Stats", testTblStats},
		{"LargeTable", testTblLarge},
		{"RefsIntoRows", testTblRefsIntoRows},
		{"ProjectIsolation", testTblProjectIsolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func tblRows(t *testing.T, rowsJSON string) []json.RawMessage {
	t.Helper()
	var rows []json.RawMessage
	if err := json.Unmarshal([]byte(rowsJSON), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

func tblCreate(t *testing.T, s storage.TableStore, project, rowsJSON string) storage.TableCreateRes {
	t.Helper()
	res, err := s.CreateTable(context.Background(), storage.TableCreateReq{Table: storage.TableSchemaForInsert{
		ProjectID: project, Rows: tblRows(t, rowsJSON)}})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return res
}

func tblQuery(t *testing.T, s storage.TableStore, req storage.TableQueryReq) []storage.TableRowSchema {
	t.Helper()
	res, err := s.QueryTable(context.Background(), req)
	if err != nil {
		t.Fatalf("QueryTable: %v", err)
	}
	return res.Rows
}

// tblIndexes lists original_index of rows, in order.
func tblIndexes(rows []storage.TableRowSchema) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r.OriginalIndex))
	}
	return strings.Join(out, ",")
}

func testTblCreateDigests(t *testing.T, s storage.TableStore) {
	res := tblCreate(t, s, projA, tblSampleRows)
	if !slices.Equal(res.RowDigests, tblSampleDigests) || res.Digest != digest.TableDigest(tblSampleDigests) {
		t.Fatalf("create = %+v", res)
	}
	if res.Digest != "404fb12bd4ead65170701df6a54dfa6be5525fed88033c93f9347cd2f1b4df46" {
		t.Fatalf("table digest %s is not the hex SHA-256 of the row digests", res.Digest)
	}
	again := tblCreate(t, s, projA, tblSampleRows)
	if again.Digest != res.Digest {
		t.Fatal("re-creating changed the digest")
	}
	rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: res.Digest})
	if len(rows) != 2 || tblIndexes(rows) != "0,1" || rows[0].Digest != tblSampleDigests[0] {
		t.Fatalf("query = %+v", rows)
	}
	// Rows come back with their received key order.
	if string(rows[0].Val) != `{"question": "capital of France?", "expected": "Paris"}` {
		t.Fatalf("row val = %s", rows[0].Val)
	}
	empty := tblCreate(t, s, projA, `[]`)
	if empty.Digest != digest.EmptyTableDigest || empty.RowDigests == nil || len(empty.RowDigests) != 0 {
		t.Fatalf("empty table = %+v", empty)
	}
	if rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: empty.Digest}); len(rows) != 0 {
		t.Fatalf("empty table has rows %+v", rows)
	}
}

func testTblCreateRules(t *testing.T, s storage.TableStore) {
	ctx := context.Background()
	for _, rows := range []string{`[1]`, `[{"a": 1}, "text"]`, `[[{"a": 1}]]`, `[null]`} {
		_, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: projA, Rows: tblRows(t, rows)}})
		wantKind(t, "rows "+rows, err, storage.ErrInvalidArgument)
	}
	wrong := digest.EmptyTableDigest
	_, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{
		ProjectID: projA, Rows: tblRows(t, tblSampleRows), ExpectedDigest: &wrong}})
	wantKind(t, "mismatching expected_digest", err, storage.ErrConflict)
	right := digest.TableDigest(tblSampleDigests)
	if _, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{
		ProjectID: projA, Rows: tblRows(t, tblSampleRows), ExpectedDigest: &right}}); err != nil {
		t.Fatalf("matching expected_digest: %v", err)
	}
}

func testTblUpdate(t *testing.T, s storage.TableStore) {
	base := tblCreate(t, s, projA, `[{"n": 0}, {"n": 1}, {"n": 2}]`)
	up, err := s.UpdateTable(context.Background(), storage.TableUpdateReq{ProjectID: projA, BaseDigest: base.Digest,
		Updates: []storage.TableUpdateSpec{
			{Append: &storage.TableAppend{Row: json.RawMessage(`{"n": 3}`)}},
			{Pop: &storage.TablePop{Index: 0}},
			{Insert: &storage.TableInsert{Index: 1, Row: json.RawMessage(`{"n": 9}`)}},
			{Insert: &storage.TableInsert{Index: 4, Row: json.RawMessage(`{"n": 0}`)}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	rowDigest := func(v string) string {
		d, err := digest.RowDigest(json.RawMessage(v))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	wantUpdated := []string{rowDigest(`{"n": 3}`), base.RowDigests[0], rowDigest(`{"n": 9}`), rowDigest(`{"n": 0}`)}
	final := []string{base.RowDigests[1], rowDigest(`{"n": 9}`), base.RowDigests[2], rowDigest(`{"n": 3}`), base.RowDigests[0]}
	if !slices.Equal(up.UpdatedRowDigests, wantUpdated) || up.Digest != digest.TableDigest(final) {
		t.Fatalf("update = %+v", up)
	}
	var got []string
	for _, r := range tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: up.Digest}) {
		got = append(got, string(r.Val))
	}
	if strings.Join(got, ";") != `{"n": 1};{"n": 9};{"n": 2};{"n": 3};{"n": 0}` {
		t.Fatalf("updated rows = %v", got)
	}
	if rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projA, Digest: base.Digest}); len(rows) != 3 {
		t.Fatal("the base table changed")
	}
}

func testTblUpdateRules(t *testing.T, s storage.TableStore) {
	base := tblCreate(t, s, projA, `[{"n": 0}]`)
	row := json.RawMessage(`{"n": 1}`)
	for name, u := range map[string]storage.TableUpdateSpec{
		"pop past end":    {Pop: &storage.TablePop{Index: 1}},
		"pop negative":    {Pop: &storage.TablePop{Index: -1}},
		"insert past end": {Insert: &storage.TableInsert{Index: 2, Row: row}},
		"insert negative": {Insert: &storage.TableInsert{Index: -1, Row: row}},
		"two operations":  {Append: &storage.TableAppend{Row: row}, Pop: &storage.TablePop{}},
		"no operation":    {},
		"non-object row":  {Append: &storage.TableAppend{Row: json.RawMessage(`[1]`)}},
	} {
		_, err := s.UpdateTable(context.Background(), storage.TableUpdateReq{ProjectID: projA, BaseDigest: base.Digest,
			Updates: []storage.TableUpdateSpec{u}})
		wantKind(t, name, err, storage.ErrInvalidArgument)
		if name == "pop past end" && !strings.Contains(err.Error(), "Index out of range") {
			t.Errorf("message %q does not say Index out of range", err)
		}
	}
	_, err := s.UpdateTable(context.Background(), storage.TableUpdateReq{ProjectID: projA, BaseDigest: digest.EmptyTableDigest,
		Updates: []storage.TableUpdateSpec{{Append: &storage.TableAppend{Row: row}}}})
	wantKind(t, "unknown base", err, storage.ErrNotFound)
}
