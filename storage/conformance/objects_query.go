package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

func testObjQueryFilters(t *testing.T, s storage.ObjectStore) {
	objCreate(t, s, projA, "add", objOpVal)
	objCreate(t, s, projA, "tpl", objClassVal)
	objCreate(t, s, projA, "cfg", `{"v": 0}`)
	objCreate(t, s, projA, "cfg", `{"v": 1}`)
	objCreate(t, s, projA, "ds", `{"_class_name": "Mine", "_bases": ["Dataset", "Object", "BaseModel"]}`)
	yes, no := true, false
	tests := []struct {
		name   string
		filter storage.ObjectVersionFilter
		want   string
	}{
		{"none", storage.ObjectVersionFilter{}, "add:v0,tpl:v0,cfg:v0,cfg:v1,ds:v0"},
		{"ops", storage.ObjectVersionFilter{IsOp: &yes}, "add:v0"},
		{"not ops", storage.ObjectVersionFilter{IsOp: &no}, "tpl:v0,cfg:v0,cfg:v1,ds:v0"},
		{"ids", storage.ObjectVersionFilter{ObjectIDs: []string{"cfg", "nope"}}, "cfg:v0,cfg:v1"},
		{"latest only", storage.ObjectVersionFilter{ObjectIDs: []string{"cfg"}, LatestOnly: true}, "cfg:v1"},
		{"base classes", storage.ObjectVersionFilter{BaseObjectClasses: []string{"Dataset", "PromptTemplate"}}, "tpl:v0,ds:v0"},
		{"exclude keeps untyped", storage.ObjectVersionFilter{ExcludeBaseObjectClasses: []string{"Dataset"}}, "add:v0,tpl:v0,cfg:v0,cfg:v1"},
		{"leaf classes", storage.ObjectVersionFilter{LeafObjectClasses: []string{"Mine"}}, "ds:v0"},
		{"combined", storage.ObjectVersionFilter{IsOp: &no, LatestOnly: true, ExcludeBaseObjectClasses: []string{"PromptTemplate"}}, "cfg:v1,ds:v0"},
	}
	for _, tt := range tests {
		f := tt.filter
		if got := versionsOf(objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, Filter: &f})); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func testObjQueryOrderAndPaging(t *testing.T, s storage.ObjectStore) {
	for _, id := range []string{"b", "a", "c"} {
		objCreate(t, s, projA, id, `{"v": 0}`)
	}
	objCreate(t, s, projA, "a", `{"v": 1}`)
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name string
		req  storage.ObjQueryReq
		want string
	}{
		{"default created_at", storage.ObjQueryReq{}, "b:v0,a:v0,c:v0,a:v1"},
		{"object_id desc", storage.ObjQueryReq{SortBy: []storage.SortBy{{Field: "object_id", Direction: "desc"}}}, "c:v0,b:v0,a:v0,a:v1"},
		{"object_id asc, uppercase", storage.ObjQueryReq{SortBy: []storage.SortBy{{Field: "object_id", Direction: "ASC"}}}, "a:v0,a:v1,b:v0,c:v0"},
		{"unknown field ignored", storage.ObjQueryReq{SortBy: []storage.SortBy{{Field: "val.v", Direction: "desc"}}}, "b:v0,a:v0,c:v0,a:v1"},
		{"created_at desc", storage.ObjQueryReq{SortBy: []storage.SortBy{{Field: "created_at", Direction: "desc"}}}, "a:v1,c:v0,a:v0,b:v0"},
		{"limit", storage.ObjQueryReq{Limit: i64(2)}, "b:v0,a:v0"},
		{"offset", storage.ObjQueryReq{Offset: i64(3)}, "a:v1"},
		{"limit and offset", storage.ObjQueryReq{Limit: i64(2), Offset: i64(1)}, "a:v0,c:v0"},
		{"limit zero", storage.ObjQueryReq{Limit: i64(0)}, ""},
	}
	for _, tt := range tests {
		tt.req.ProjectID = projA
		if got := versionsOf(objQuery(t, s, tt.req)); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
	_, err := s.QueryObjects(context.Background(), storage.ObjQueryReq{ProjectID: projA, Offset: i64(-1)})
	wantKind(t, "negative offset", err, storage.ErrInvalidArgument)

	meta := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, MetadataOnly: true, Limit: i64(1)})
	if string(meta[0].Val) != "{}" || meta[0].SizeBytes != nil {
		t.Errorf("metadata_only val = %s size %v", meta[0].Val, meta[0].SizeBytes)
	}
	sized := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, IncludeStorageSize: true, Limit: i64(1)})
	if sized[0].SizeBytes == nil || *sized[0].SizeBytes != int64(len(`{"v": 0}`)) {
		t.Errorf("size_bytes = %v, want the length of the stored json.dumps text", sized[0].SizeBytes)
	}
}

func testObjTagsAndAliases(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	d0 := objCreate(t, s, projA, "m", `{"v": 0}`)
	d1 := objCreate(t, s, projA, "m", `{"v": 1}`)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("add tags", s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: d0, Tags: []string{"zeta", "alpha one", "zeta"}}))
	must("add tags by v1", s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: "v1", Tags: []string{"beta"}}))
	must("set alias", s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Digest: d0, Aliases: []string{"prod", "stable"}}))
	if o := objRead(t, s, projA, "m", "prod"); o.Digest != d0 {
		t.Fatalf("alias prod reads %s, want v0", o.Digest)
	}
	res, err := s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projA, ObjectID: "m", Digest: d0, IncludeTagsAndAliases: true})
	must("read with labels", err)
	if !slices.Equal(res.Obj.Tags, []string{"alpha one", "zeta"}) || !slices.Equal(res.Obj.Aliases, []string{"prod", "stable"}) {
		t.Fatalf("v0 labels = %q %q", res.Obj.Tags, res.Obj.Aliases)
	}
	res, err = s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projA, ObjectID: "m", Digest: "latest", IncludeTagsAndAliases: true})
	must("read latest with labels", err)
	if !slices.Equal(res.Obj.Tags, []string{"beta"}) || !slices.Equal(res.Obj.Aliases, []string{"latest"}) {
		t.Fatalf("v1 labels = %q %q", res.Obj.Tags, res.Obj.Aliases)
	}
	// Setting an alias again moves it; removing tags and aliases is quiet.
	must("move alias", s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Digest: d1, Aliases: []string{"prod"}}))
	if o := objRead(t, s, projA, "m", "prod"); o.Digest != d1 {
		t.Fatal("alias prod did not move to v1")
	}
	must("remove tags", s.RemoveObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: d0, Tags: []string{"zeta", "never"}}))
	must("remove alias", s.RemoveObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Aliases: []string{"stable", "never"}}))
	tags, err := s.ListTags(ctx, projA)
	must("list tags", err)
	aliases, err := s.ListAliases(ctx, projA)
	must("list aliases", err)
	if !slices.Equal(tags, []string{"alpha one", "beta"}) || !slices.Equal(aliases, []string{"latest", "prod"}) {
		t.Fatalf("lists = %q %q", tags, aliases)
	}
	byTag := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, Filter: &storage.ObjectVersionFilter{Tags: []string{"alpha one", "x"}}})
	byAlias := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, Filter: &storage.ObjectVersionFilter{Aliases: []string{"latest"}}})
	if versionsOf(byTag) != "m:v0" || versionsOf(byAlias) != "m:v1" {
		t.Fatalf("filter by tag = %s, by alias latest = %s", versionsOf(byTag), versionsOf(byAlias))
	}
	labelled := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, IncludeTagsAndAliases: true})
	if len(labelled) != 2 || labelled[0].Tags == nil || labelled[0].Aliases == nil || !slices.Equal(labelled[1].Aliases, []string{"latest", "prod"}) {
		t.Fatalf("query labels = %+v", labelled)
	}
}

func testObjLabelNameRules(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	d := objCreate(t, s, projA, "m", `{"v": 0}`)
	for _, tag := range []string{"", " lead", "trail ", "two  spaces", "semi;colon", strings.Repeat("t", 257)} {
		err := s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: d, Tags: []string{tag}})
		wantKind(t, "tag "+tag, err, storage.ErrInvalidArgument)
	}
	for _, alias := range []string{"", "   ", "latest", "v12", "a/b", "a:b", strings.Repeat("a", 129)} {
		err := s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Digest: d, Aliases: []string{alias}})
		wantKind(t, "alias "+alias, err, storage.ErrInvalidArgument)
	}
	for _, alias := range []string{"v1beta", "Release Candidate", "version"} {
		if err := s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Digest: d, Aliases: []string{alias}}); err != nil {
			t.Errorf("alias %q: %v", alias, err)
		}
	}
	err := s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: objPlainDigest, Tags: []string{"x"}})
	wantKind(t, "tag unknown version", err, storage.ErrNotFound)
	err = s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "nope", Digest: d, Aliases: []string{"x"}})
	wantKind(t, "alias unknown object", err, storage.ErrNotFound)
}

func testObjDeleteDropsLabels(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	d0 := objCreate(t, s, projA, "m", `{"v": 0}`)
	objCreate(t, s, projA, "m", `{"v": 1}`)
	if err := s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: d0, Tags: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Digest: d0, Aliases: []string{"prod"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: projA, ObjectID: "m", Digests: []string{d0}}); err != nil {
		t.Fatal(err)
	}
	tags, _ := s.ListTags(ctx, projA)
	aliases, _ := s.ListAliases(ctx, projA)
	if len(tags) != 0 || !slices.Equal(aliases, []string{"latest"}) {
		t.Fatalf("after delete: tags %q aliases %q", tags, aliases)
	}
	_, err := s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projA, ObjectID: "m", Digest: "prod"})
	wantKind(t, "deleted alias", err, storage.ErrNotFound)
	err = s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "m", Digest: d0, Tags: []string{"x"}})
	wantKind(t, "tag a deleted version", err, storage.ErrNotFound)
}

// testObjKeyOrder: a value reads back, through every read path, with its
// keys in the order they were sent; the digest is that of the sorted keys,
// so the same value in another order is the same version.
func testObjKeyOrder(t *testing.T, s storage.ObjectStore) {
	const sent = `{"temperature": 0.2, "model": "m", "tags": ["b", "a"], "nested": {"z": 1, "a": {"y": 2, "b": 3}}}`
	const want = `{"temperature":0.2,"model":"m","tags":["b","a"],"nested":{"z":1,"a":{"y":2,"b":3}}}`
	d := objCreate(t, s, projA, "settings", sent)
	if again := objCreate(t, s, projA, "settings", `{"model": "m", "nested": {"a": {"b": 3, "y": 2}, "z": 1}, "tags": ["b", "a"], "temperature": 0.2}`); again != d {
		t.Fatalf("the same value in another key order has digest %s, want %s", again, d)
	}
	reads := map[string]json.RawMessage{"obj/read": objRead(t, s, projA, "settings", d).Val}
	if q := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA, Filter: &storage.ObjectVersionFilter{ObjectIDs: []string{"settings"}}}); len(q) == 1 {
		reads["objs/query"] = q[0].Val
	}
	refs, err := s.ReadRefs(context.Background(), readAll, []string{"weave:///" + projA + "/object/settings:" + d,
		"weave:///" + projA + "/object/settings:" + d + "/key/nested"})
	if err != nil || len(refs) != 2 {
		t.Fatalf("ReadRefs = %d values, %v", len(refs), err)
	}
	reads["refs/read_batch"], reads["refs/read_batch into a key"] = refs[0], refs[1]
	for path, val := range reads {
		var b bytes.Buffer
		if err := json.Compact(&b, val); err != nil {
			t.Fatalf("%s: %v in %s", path, err, val)
		}
		wantHere := want
		if path == "refs/read_batch into a key" {
			wantHere = `{"z":1,"a":{"y":2,"b":3}}`
		}
		if b.String() != wantHere {
			t.Errorf("%s read back %s\nwant %s", path, b.String(), wantHere)
		}
	}
	if len(reads) != 4 {
		t.Errorf("read paths %d, want 4", len(reads))
	}
}
