package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

func objCreateErr(s storage.ObjectStore, o storage.ObjSchemaForInsert) error {
	_, err := s.CreateObject(context.Background(), storage.ObjCreateReq{Obj: o})
	return err
}

func testObjKindAndClasses(t *testing.T, s storage.ObjectStore) {
	objCreate(t, s, projA, "add", objOpVal)
	objCreate(t, s, projA, "greeting-template", objClassVal)
	objCreate(t, s, projA, "my-model", `{"_class_name": "MyModel", "_bases": ["Model", "Object", "BaseModel"]}`)
	objCreate(t, s, projA, "plain", `[1, 2]`)
	want := map[string][3]string{ // kind, base, leaf ("-" for null)
		"add":               {storage.KindOp, "-", "-"},
		"greeting-template": {storage.KindObject, "PromptTemplate", "PromptTemplate"},
		"my-model":          {storage.KindObject, "Model", "MyModel"},
		"plain":             {storage.KindObject, "-", "-"},
	}
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	for _, o := range objQuery(t, s, storage.ObjQueryReq{ProjectID: projA}) {
		if got := [3]string{o.Kind, str(o.BaseObjectClass), str(o.LeafObjectClass)}; got != want[o.ObjectID] {
			t.Errorf("%s: kind/base/leaf = %v, want %v", o.ObjectID, got, want[o.ObjectID])
		}
	}
}

func testObjObjectIDRules(t *testing.T, s storage.ObjectStore) {
	for _, id := range []string{"", "has space", "a/b", "a:b", "emoji😀", strings.Repeat("x", 129)} {
		err := objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: id, Val: json.RawMessage(`1`)})
		wantKind(t, "object_id "+id, err, storage.ErrFieldNotAllowed)
	}
	for _, id := range []string{"a.b_c-d", "Évaluation_1", strings.Repeat("x", 128), "数据集"} {
		objCreate(t, s, projA, id, `1`)
	}
	err := objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: "ok", Val: json.RawMessage(`{"a": }`)})
	wantKind(t, "invalid JSON val", err, storage.ErrInvalidArgument)
	err = objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: "ok"})
	wantKind(t, "missing val", err, storage.ErrInvalidArgument)
	bad := `{"_type": "CustomWeaveType", "weave_type": {"type": "Op"}, "files": {"../escape.py": "d"}}`
	err = objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: "op", Val: json.RawMessage(bad)})
	wantKind(t, "unsafe file name", err, storage.ErrInvalidArgument)
}

func testObjTypeCollision(t *testing.T, s storage.ObjectStore) {
	objCreate(t, s, projA, "thing", `{"x": 1}`)
	err := objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: "thing", Val: json.RawMessage(objClassVal)})
	wantKind(t, "untyped then class", err, storage.ErrInvalidArgument)
	// Ops and values keep separate namespaces for the check.
	objCreate(t, s, projA, "thing", objOpVal)
	// A second generic version is fine, as is the same class again.
	objCreate(t, s, projA, "thing", `{"x": 2}`)
	objCreate(t, s, projA, "tpl", objClassVal)
	objCreate(t, s, projA, "tpl", strings.Replace(objClassVal, "says hi", "says hello", 1))
	// Once every version of a name is deleted the name is free again.
	if _, err := s.DeleteObjects(context.Background(), storage.ObjDeleteReq{ProjectID: projA, ObjectID: "tpl"}); err != nil {
		t.Fatal(err)
	}
	objCreate(t, s, projA, "tpl", `{"now": "untyped"}`)
}

func testObjExpectedDigest(t *testing.T, s storage.ObjectStore) {
	wrong, right := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", objPlainDigest
	err := objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: "c", Val: json.RawMessage(objPlainVal), ExpectedDigest: &wrong})
	wantKind(t, "mismatching expected_digest", err, storage.ErrConflict)
	if objs := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA}); len(objs) != 0 {
		t.Fatalf("a refused create stored %s", versionsOf(objs))
	}
	if err := objCreateErr(s, storage.ObjSchemaForInsert{ProjectID: projA, ObjectID: "c", Val: json.RawMessage(objPlainVal), ExpectedDigest: &right}); err != nil {
		t.Fatalf("matching expected_digest: %v", err)
	}
}

func testObjReadNotFound(t *testing.T, s storage.ObjectStore) {
	objCreate(t, s, projA, "here", `{"a": 1}`)
	for _, c := range [][2]string{{"missing", "latest"}, {"here", objPlainDigest}, {"here", "v7"}, {"here", "no-such-alias"}} {
		_, err := s.ReadObject(context.Background(), storage.ObjReadReq{ProjectID: projA, ObjectID: c[0], Digest: c[1]})
		wantKind(t, c[0]+":"+c[1], err, storage.ErrNotFound)
		if !strings.Contains(err.Error(), "Obj "+c[0]+":"+c[1]+" not found") {
			t.Errorf("message %q does not name the object", err)
		}
	}
}

func testObjDeleteAndResurrect(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	d0 := objCreate(t, s, projA, "m", `{"v": 0}`)
	d1 := objCreate(t, s, projA, "m", `{"v": 1}`)
	res, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: projA, ObjectID: "m", Digests: []string{d1}})
	if err != nil || res.NumDeleted != 1 || len(res.DeletedVersions) != 1 || res.DeletedVersions[0].Digest != d1 {
		t.Fatalf("delete = %+v, %v", res, err)
	}
	if o := objRead(t, s, projA, "m", "latest"); o.Digest != d0 || o.IsLatest != 1 {
		t.Fatalf("latest after deleting the newest = %s", o.Digest)
	}
	_, err = s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projA, ObjectID: "m", Digest: d1})
	var deleted *storage.ObjectDeletedError
	if !errors.As(err, &deleted) || !errors.Is(err, storage.ErrNotFound) || deleted.DeletedAt.IsZero() || deleted.VersionIndex != 1 {
		t.Fatalf("read deleted = %v", err)
	}
	if !strings.HasPrefix(err.Error(), "m:v1 was deleted at ") {
		t.Errorf("message = %q", err)
	}
	if objs := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA}); versionsOf(objs) != "m:v0" {
		t.Fatalf("query after delete = %s", versionsOf(objs))
	}
	// Re-publishing the deleted value revives it with the next index.
	if d := objCreate(t, s, projA, "m", `{"v": 1}`); d != d1 {
		t.Fatal("digest changed")
	}
	o := objRead(t, s, projA, "m", d1)
	if o.VersionIndex != 2 || o.IsLatest != 1 || o.DeletedAt != nil {
		t.Fatalf("revived version = index %d latest %d deleted %v", o.VersionIndex, o.IsLatest, o.DeletedAt)
	}
	if objRead(t, s, projA, "m", "v2").Digest != d1 {
		t.Fatal("v2 does not name the revived version")
	}
}

func testObjDeleteRules(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	del := func(digests ...string) (storage.ObjDeleteRes, error) {
		return s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: projA, ObjectID: "m", Digests: digests})
	}
	d0 := objCreate(t, s, projA, "m", `{"v": 0}`)
	objCreate(t, s, projA, "m", `{"v": 1}`)
	objCreate(t, s, projA, "m", `{"v": 2}`)
	_, err := del(make([]string, storage.MaxDeleteDigests+1)...)
	wantKind(t, "too many digests", err, storage.ErrInvalidArgument)
	_, err = del(objPlainDigest)
	wantKind(t, "unknown digest", err, storage.ErrNotFound)
	_, err = del(d0, objPlainDigest)
	wantKind(t, "partly unknown digests", err, storage.ErrNotFound)
	if objs := objQuery(t, s, storage.ObjQueryReq{ProjectID: projA}); len(objs) != 3 {
		t.Fatalf("a refused delete removed versions: %s", versionsOf(objs))
	}
	if res, err := del("latest", "v0"); err != nil || res.NumDeleted != 2 {
		t.Fatalf("delete latest and v0 = %+v, %v", res, err)
	}
	if o := objRead(t, s, projA, "m", "latest"); o.VersionIndex != 1 {
		t.Fatalf("latest = v%d, want v1", o.VersionIndex)
	}
	if res, err := del(); err != nil || res.NumDeleted != 1 {
		t.Fatalf("delete all = %+v, %v", res, err)
	}
	_, err = s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projA, ObjectID: "m", Digest: "latest"})
	wantKind(t, "latest of a deleted object", err, storage.ErrNotFound)
	_, err = del()
	wantKind(t, "deleting nothing left", err, storage.ErrNotFound)
}
