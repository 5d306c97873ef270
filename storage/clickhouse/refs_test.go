package clickhouse

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weftdev/weft/storage"
)

// TestRefsMixedProjectsInOneBatch: one batch reads several projects, a
// query per project; a digest stored only in another project, or under
// another name, resolves to null.
func TestRefsMixedProjectsInOneBatch(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := context.Background()
	create := func(project, id, val string) string {
		t.Helper()
		res, err := s.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{ProjectID: project, ObjectID: id, Val: json.RawMessage(val)}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Digest
	}
	tbl, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: "b/p",
		Rows: []json.RawMessage{json.RawMessage(`{"row": "b"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	rowRef := "weave:///b/p/object/ds:" + create("b/p", "ds", `{"rows": "weave:///b/p/table/`+tbl.Digest+`"}`) + "/attr/rows/id/" + tbl.RowDigests[0]
	dA, dB := create("a/p", "m", `{"v": "a"}`), create("b/p", "m", `{"v": "b"}`)
	dOther := create("a/p", "other", `{"v": "b"}`) // B's value under another name: the same digest as dB
	refs := []string{
		"weave:///a/p/object/m:" + dA,
		"weave:///b/p/object/m:" + dB,
		"weave:///a/p/object/m:" + dB, // B's version, asked of A
		"weave:///a/p/object/other:" + dOther,
		"weave:///b/p/object/other:" + dOther, // A's name, asked of B
		"weave:///a/p/object/pointer:" + create("a/p", "pointer", `{"to": "`+rowRef+`"}`) + "/key/to/key/row",
	}
	vals, err := s.ReadRefs(ctx, func(string) bool { return true }, refs)
	want := []string{`{"v": "a"}`, `{"v": "b"}`, "", `{"v": "b"}`, "", `"b"`}
	for i := 0; err == nil && i < len(want); i++ {
		if string(vals[i]) != want[i] {
			t.Errorf("%s = %s; want %s", refs[i], vals[i], want[i])
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
