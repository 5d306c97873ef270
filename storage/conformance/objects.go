package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

// Values recorded from the TypeScript client with the digests its server
// answered (Python json.dumps(sort_keys=True) digests).
const (
	objPlainVal    = `{"temperature": 0.2, "model": "fake-model", "tags": ["a", "b"]}`
	objPlainDigest = "L6FDDACYKqV8VIILzjVobLzmqehhCT0XcEfAE4lykYc"
	objOpVal       = `{"_type": "CustomWeaveType", "weave_type": {"type": "Op"}, "files": {"obj.py": "wv9Fm8TmxaAoTF6fCytXnDxFzUXeuOKp3gheI3LzTiI"}, "load_op": "NO_LOAD_OP"}`
	objOpDigest    = "040FC5U1XkFW3KV1ftomLG0SmtdyOdytLuA5CHV0l9E"
	objClassVal    = `{"_type": "PromptTemplate", "_class_name": "PromptTemplate", "_bases": ["Object", "BaseModel"], "name": "greeting-template", "description": "says hi", "template": "Hello {name}"}`
	objClassDigest = "NzJbkgf75Y4sn7dc4Yc21qMhiCrURxHXRCT3ih0l49U"
)

const (
	projA = "acme/demo"
	projB = "other/team"
)

// runObjects runs every objects case, each against a fresh store.
func runObjects(t *testing.T, newStore func(t *testing.T) storage.ObjectStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.ObjectStore)
	}{
		{"CreateMatchesClientDigests", testObjCreateDigests},
		{"CreateIsIdempotent", testObjCreateIdempotent},
		{"VersionIndexAndLatest", testObjVersionIndexAndLatest},
		{"KindAndClasses", testObjKindAndClasses},
		{"ObjectIDRules", testObjObjectIDRules},
		{"TypeCollision", testObjTypeCollision},
		{"ExpectedDigest", testObjExpectedDigest},
		{"ReadNotFound", testObjReadNotFound},
		{"DeleteAndResurrect", testObjDeleteAndResurrect},
		{"DeleteRules", testObjDeleteRules},
		{"DeleteStamp", testObjDeleteStamp},
		{"QueryFilters", testObjQueryFilters},
		{"QueryOrderAndPaging", testObjQueryOrderAndPaging},
		{"TagsAndAliases", testObjTagsAndAliases},
		{"LabelNameRules", testObjLabelNameRules},
		{"DeleteDropsLabels", testObjDeleteDropsLabels},
		{"ReadRefs", testObjReadRefs},
		{"ValueKeepsKeyOrder", testObjKeyOrder},
		{"ReadRefsRules", testObjReadRefsRules},
		{"ProjectIsolation", testObjProjectIsolation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func objCreate(t *testing.T, s storage.ObjectStore, project, id, val string) string {
	t.Helper()
	res, err := s.CreateObject(context.Background(), storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
		ProjectID: project, ObjectID: id, Val: json.RawMessage(val)}})
	if err != nil {
		t.Fatalf("CreateObject %s/%s: %v", project, id, err)
	}
	if res.ObjectID != id || len(res.Digest) != 43 {
		t.Fatalf("CreateObject answered %+v", res)
	}
	return res.Digest
}

func objRead(t *testing.T, s storage.ObjectStore, project, id, selector string) storage.ObjSchema {
	t.Helper()
	res, err := s.ReadObject(context.Background(), storage.ObjReadReq{ProjectID: project, ObjectID: id, Digest: selector})
	if err != nil {
		t.Fatalf("ReadObject %s:%s: %v", id, selector, err)
	}
	return res.Obj
}

func objQuery(t *testing.T, s storage.ObjectStore, req storage.ObjQueryReq) []storage.ObjSchema {
	t.Helper()
	res, err := s.QueryObjects(context.Background(), req)
	if err != nil {
		t.Fatalf("QueryObjects: %v", err)
	}
	return res.Objs
}

func wantKind(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: err = %v, want %v", what, err, kind)
	}
}

// sameJSON compares JSON texts by value.
func sameJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("stored value %s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("value = %s, want %s", got, want)
	}
}

// versionsOf names versions as id:v<N>, in order.
func versionsOf(objs []storage.ObjSchema) string {
	var vs []string
	for _, o := range objs {
		vs = append(vs, fmt.Sprintf("%s:v%d", o.ObjectID, o.VersionIndex))
	}
	return strings.Join(vs, ",")
}

func testObjCreateDigests(t *testing.T, s storage.ObjectStore) {
	for _, c := range []struct{ id, val, digest string }{
		{"demo-config", objPlainVal, objPlainDigest},
		{"add", objOpVal, objOpDigest},
		{"greeting-template", objClassVal, objClassDigest},
	} {
		if d := objCreate(t, s, projA, c.id, c.val); d != c.digest {
			t.Errorf("%s digest = %s, want %s", c.id, d, c.digest)
		}
		o := objRead(t, s, projA, c.id, c.digest)
		sameJSON(t, o.Val, c.val)
		if o.ProjectID != projA || o.ObjectID != c.id || o.Digest != c.digest || o.VersionIndex != 0 ||
			o.IsLatest != 1 || o.DeletedAt != nil || o.CreatedAt.IsZero() || o.Tags != nil || o.Aliases != nil {
			t.Errorf("read %s = %+v", c.id, o)
		}
	}
}

func testObjCreateIdempotent(t *testing.T, s storage.ObjectStore) {
	d1 := objCreate(t, s, projA, "cfg", `{"b": 1, "a": [1.0, "x"]}`)
	d2 := objCreate(t, s, projA, "cfg", `{"a": [1.0, "x"], "b": 1}`)
	if d1 != d2 {
		t.Fatalf("key order changed the digest: %s vs %s", d1, d2)
	}
	if objs := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA}); len(objs) != 1 || objs[0].VersionIndex != 0 {
		t.Fatalf("re-publishing made versions %s", versionsOf(objs))
	}
}

func testObjVersionIndexAndLatest(t *testing.T, s storage.ObjectStore) {
	d0 := objCreate(t, s, projA, "m", `{"v": 0}`)
	d1 := objCreate(t, s, projA, "m", `{"v": 1}`)
	d2 := objCreate(t, s, projA, "m", `{"v": 2}`)
	for sel, want := range map[string]string{"v0": d0, "v1": d1, "v2": d2, "latest": d2, d1: d1} {
		if o := objRead(t, s, projA, "m", sel); o.Digest != want {
			t.Errorf("read %s = %s, want %s", sel, o.Digest, want)
		}
	}
	if o := objRead(t, s, projA, "m", "v1"); o.VersionIndex != 1 || o.IsLatest != 0 {
		t.Errorf("v1 = index %d latest %d", o.VersionIndex, o.IsLatest)
	}
	// Re-publishing an older value moves latest back without a new index.
	if d := objCreate(t, s, projA, "m", `{"v": 0}`); d != d0 {
		t.Fatalf("digest changed on re-publish")
	}
	latest := objRead(t, s, projA, "m", "latest")
	if latest.Digest != d0 || latest.VersionIndex != 0 || latest.IsLatest != 1 {
		t.Fatalf("latest after re-publish = %+v", latest)
	}
	objs := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA})
	if len(objs) != 3 {
		t.Fatalf("versions = %s, want 3", versionsOf(objs))
	}
	latestCount := 0
	for _, o := range objs {
		latestCount += o.IsLatest
	}
	if latestCount != 1 {
		t.Fatalf("%d versions flagged latest", latestCount)
	}
}
