package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

func readAll(string) bool { return true }

func objReadRefs(t *testing.T, s storage.ObjectStore, canRead func(string) bool, refs ...string) []string {
	t.Helper()
	vals, err := s.ReadRefs(context.Background(), canRead, refs)
	if err != nil {
		t.Fatalf("ReadRefs: %v", err)
	}
	if len(vals) != len(refs) {
		t.Fatalf("ReadRefs gave %d values for %d refs", len(vals), len(refs))
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "null"
		if v != nil {
			var x any
			if err := json.Unmarshal(v, &x); err != nil {
				t.Fatalf("value %d is not JSON: %s", i, v)
			}
			b, _ := json.Marshal(x)
			out[i] = string(b)
		}
	}
	return out
}

func testObjReadRefs(t *testing.T, s storage.ObjectStore) {
	inner := objCreate(t, s, projA, "inner", `{"cfg": {"temperature": 0.5}, "list": [1, 2, 3]}`)
	innerRef := "weave:///" + projA + "/object/inner:" + inner
	outer := objCreate(t, s, projA, "outer", `{"a": {"b/c": [10, {"d": "deep"}]}, "model": "`+innerRef+`/attr/cfg",
		"plain": "`+innerRef+`", "n": null}`)
	gone := objCreate(t, s, projA, "gone", `{"x": 1}`)
	if _, err := s.DeleteObjects(context.Background(), storage.ObjDeleteReq{ProjectID: projA, ObjectID: "gone"}); err != nil {
		t.Fatal(err)
	}
	ref := func(name, digest, extra string) string {
		return "weave:///" + projA + "/object/" + name + ":" + digest + extra
	}
	tests := []struct{ ref, want string }{
		{ref("inner", inner, ""), `{"cfg":{"temperature":0.5},"list":[1,2,3]}`},
		{ref("outer", outer, "/key/a/key/b%2Fc/index/1/attr/d"), `"deep"`},
		{ref("outer", outer, "/key/a/key/b%2Fc/index/-2"), `10`},
		{ref("outer", outer, "/attr/model/key/temperature"), `0.5`},
		{ref("outer", outer, "/attr/plain/key/list/index/2"), `3`},
		{ref("outer", outer, "/attr/plain"), `"` + innerRef + `"`},
		{ref("outer", outer, "/attr/n"), `null`},
		{ref("outer", outer, "/key/missing"), `null`},
		{ref("outer", outer, "/key/a/key/b%2Fc/index/5"), `null`},
		{ref("gone", gone, ""), `null`},
		{ref("inner", objPlainDigest, ""), `null`},
		{strings.Replace(ref("inner", inner, ""), "/object/", "/op/", 1), `{"cfg":{"temperature":0.5},"list":[1,2,3]}`},
	}
	var refs []string
	for _, tt := range tests {
		refs = append(refs, tt.ref)
	}
	got := objReadRefs(t, s, readAll, refs...)
	for i, tt := range tests {
		if got[i] != tt.want {
			t.Errorf("%s = %s, want %s", tt.ref, got[i], tt.want)
		}
	}
}

func testObjReadRefsRules(t *testing.T, s storage.ObjectStore) {
	d := objCreate(t, s, projA, "m", `{"v": 0}`)
	if err := s.SetObjectAliases(context.Background(), storage.ObjAliasesReq{ProjectID: projA, ObjectID: "m", Digest: d, Aliases: []string{"prod"}}); err != nil {
		t.Fatal(err)
	}
	base := "weave:///" + projA
	for _, bad := range []string{
		base + "/object/m:latest", base + "/object/m:v0", base + "/object/m:prod",
		base + "/table/" + strings.Repeat("a", 64), base + "/call/c1", "weave:///nope", "not a ref",
	} {
		_, err := s.ReadRefs(context.Background(), readAll, []string{base + "/object/m:" + d, bad})
		wantKind(t, bad, err, storage.ErrInvalidArgument)
	}
	many := make([]string, storage.MaxRefsPerReadBatch+1)
	for i := range many {
		many[i] = base + "/object/m:" + d
	}
	_, err := s.ReadRefs(context.Background(), readAll, many)
	wantKind(t, "too many refs", err, storage.ErrInvalidArgument)
	if got := objReadRefs(t, s, readAll, many[:storage.MaxRefsPerReadBatch]...); got[999] != `{"v":0}` {
		t.Fatalf("1000 refs: last = %s", got[999])
	}
	if got := objReadRefs(t, s, readAll); len(got) != 0 {
		t.Fatalf("no refs gave %v", got)
	}
}

func testObjProjectIsolation(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	d := objCreate(t, s, projA, "secret", `{"k": "a"}`)
	if err := s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projA, ObjectID: "secret", Digest: d, Tags: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []string{d, "latest", "v0"} {
		_, err := s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projB, ObjectID: "secret", Digest: sel})
		wantKind(t, "read across projects", err, storage.ErrNotFound)
	}
	if objs := objQuery(t, s, storage.ObjQueryReq{ProjectID: projB}); len(objs) != 0 {
		t.Fatalf("project B sees %s", versionsOf(objs))
	}
	_, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: projB, ObjectID: "secret"})
	wantKind(t, "delete across projects", err, storage.ErrNotFound)
	err = s.AddObjectTags(ctx, storage.ObjTagsReq{ProjectID: projB, ObjectID: "secret", Digest: d, Tags: []string{"x"}})
	wantKind(t, "tag across projects", err, storage.ErrNotFound)
	tags, _ := s.ListTags(ctx, projB)
	aliases, _ := s.ListAliases(ctx, projB)
	if len(tags)+len(aliases) != 0 {
		t.Fatalf("project B lists %q %q", tags, aliases)
	}
	// The same name and value in B is an independent version 0.
	if objCreate(t, s, projB, "secret", `{"k": "a"}`) != d || objRead(t, s, projA, "secret", "latest").VersionIndex != 0 {
		t.Fatal("project B's create touched project A")
	}
	refA := "weave:///" + projA + "/object/secret:" + d
	onlyB := func(p string) bool { return p == projB }
	if got := objReadRefs(t, s, onlyB, refA); got[0] != "null" {
		t.Fatalf("ref into an unreadable project = %s", got[0])
	}
	nested := objCreate(t, s, projB, "pointer", `{"to": "`+refA+`"}`)
	refNested := "weave:///" + projB + "/object/pointer:" + nested + "/key/to/key/k"
	if got := objReadRefs(t, s, onlyB, refNested); got[0] != "null" {
		t.Fatalf("nested ref into an unreadable project = %s", got[0])
	}
	if got := objReadRefs(t, s, readAll, refNested); got[0] != `"a"` {
		t.Fatalf("nested ref into a readable project = %s", got[0])
	}
}
