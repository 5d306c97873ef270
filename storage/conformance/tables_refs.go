package conformance

import (
	"context"
	"testing"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

func testTblRefsIntoRows(t *testing.T, s storage.TableStore) {
	objs, ok := s.(storage.ObjectStore)
	if !ok {
		t.Fatal("the ref cases need a store that also implements storage.ObjectStore")
	}
	tbl := tblCreate(t, s, projA, tblSampleRows)
	tableRef := "weave:///" + projA + "/table/" + tbl.Digest
	ds := objCreate(t, objs, projA, "demo-dataset", `{"_type": "Dataset", "_class_name": "Dataset",
		"_bases": ["Object", "BaseModel"], "name": "demo-dataset", "rows": "`+tableRef+`"}`)
	dsRef := "weave:///" + projA + "/object/demo-dataset:" + ds
	evalVal := `{"dataset": "` + dsRef + `", "first": "` + dsRef + `/attr/rows/id/` + tbl.RowDigests[0] + `"}`
	ev := objCreate(t, objs, projA, "demo-eval", evalVal)
	evRef := "weave:///" + projA + "/object/demo-eval:" + ev
	tests := []struct{ ref, want string }{
		{dsRef + "/attr/rows/id/" + tbl.RowDigests[1], `{"expected":"4","question":"2+2?"}`},
		{dsRef + "/attr/rows/id/" + tbl.RowDigests[0] + "/key/expected", `"Paris"`},
		{dsRef + "/attr/rows", `"` + tableRef + `"`},
		{dsRef + "/attr/rows/id/" + digest.StrDigest("no such row"), `null`},
		{dsRef + "/attr/rows/key/question", `null`},
		{dsRef + "/attr/name/id/" + tbl.RowDigests[0], `null`},
		{evRef + "/key/first/key/question", `"capital of France?"`},
		{evRef + "/key/dataset/attr/rows/id/" + tbl.RowDigests[1] + "/key/expected", `"4"`},
	}
	var refs []string
	for _, tt := range tests {
		refs = append(refs, tt.ref)
	}
	got := objReadRefs(t, objs, readAll, refs...)
	for i, tt := range tests {
		if got[i] != tt.want {
			t.Errorf("%s = %s, want %s", tt.ref, got[i], tt.want)
		}
	}
	onlyB := func(p string) bool { return p == projB }
	if got := objReadRefs(t, objs, onlyB, tests[0].ref); got[0] != "null" {
		t.Fatalf("row ref into an unreadable project = %s", got[0])
	}
}

func testTblProjectIsolation(t *testing.T, s storage.TableStore) {
	ctx := context.Background()
	tbl := tblCreate(t, s, projA, tblSampleRows)
	if rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projB, Digest: tbl.Digest}); len(rows) != 0 {
		t.Fatalf("project B reads %d rows of A's table", len(rows))
	}
	stats, err := s.QueryTableStats(ctx, storage.TableQueryStatsReq{ProjectID: projB, Digest: tbl.Digest})
	if err != nil || stats.Count != 0 {
		t.Fatalf("project B stats = %+v, %v", stats, err)
	}
	batch, err := s.QueryTableStatsBatch(ctx, storage.TableQueryStatsBatchReq{ProjectID: projB, Digests: []string{tbl.Digest}})
	if err != nil || len(batch.Tables) != 0 {
		t.Fatalf("project B batch = %+v, %v", batch, err)
	}
	_, err = s.UpdateTable(ctx, storage.TableUpdateReq{ProjectID: projB, BaseDigest: tbl.Digest,
		Updates: []storage.TableUpdateSpec{{Pop: &storage.TablePop{Index: 0}}}})
	wantKind(t, "update across projects", err, storage.ErrNotFound)
	// B listing A's row digests gets a table of rows B never stored.
	res, err := s.CreateTableFromDigests(ctx, storage.TableCreateFromDigestsReq{ProjectID: projB, RowDigests: tbl.RowDigests})
	if err != nil {
		t.Fatal(err)
	}
	if rows := tblQuery(t, s, storage.TableQueryReq{ProjectID: projB, Digest: res.Digest}); len(rows) != 0 {
		t.Fatalf("project B read A's rows through its own table: %+v", rows)
	}
}
