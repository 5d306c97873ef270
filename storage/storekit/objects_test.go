package storekit

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func strp(s string) *string { return &s }

func TestPrepareObject(t *testing.T) {
	good := storage.ObjSchemaForInsert{ProjectID: "e/p", ObjectID: "m", Val: json.RawMessage(`{"a": 1}`)}
	p, err := PrepareObject(good)
	if err != nil || p.Digest == "" || p.Dump == "" {
		t.Fatalf("got %+v, %v", p, err)
	}
	wrong := "nope"
	cases := []struct {
		name string
		edit func(o *storage.ObjSchemaForInsert)
		err  error
	}{
		{"valid", func(*storage.ObjSchemaForInsert) {}, nil},
		{"no project", func(o *storage.ObjSchemaForInsert) { o.ProjectID = "" }, storage.ErrInvalidArgument},
		{"bad object id", func(o *storage.ObjSchemaForInsert) { o.ObjectID = "a/b" }, storage.ErrFieldNotAllowed},
		{"no value", func(o *storage.ObjSchemaForInsert) { o.Val = nil }, storage.ErrInvalidArgument},
		{"broken value", func(o *storage.ObjSchemaForInsert) { o.Val = json.RawMessage(`{`) }, storage.ErrInvalidArgument},
		{"digest differs", func(o *storage.ObjSchemaForInsert) { o.ExpectedDigest = &wrong }, storage.ErrConflict},
		{"digest matches", func(o *storage.ObjSchemaForInsert) { o.ExpectedDigest = &p.Digest }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := good
			c.edit(&o)
			if _, err := PrepareObject(o); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("err = %v; want %v", err, c.err)
			}
		})
	}
}

func TestPlanCreate(t *testing.T) {
	p, err := PrepareObject(storage.ObjSchemaForInsert{ProjectID: "e/p", ObjectID: "m", Val: json.RawMessage(`{"a": 1}`)})
	if err != nil {
		t.Fatal(err)
	}
	other := VersionMeta{Digest: "other", Kind: p.Kind, Base: p.BaseObjectClass}
	cases := []struct {
		name     string
		versions []VersionMeta
		want     CreatePlan
		err      error
	}{
		{"first version", nil, CreatePlan{Existing: -1}, nil},
		{"next index", []VersionMeta{other}, CreatePlan{Existing: -1, Index: 1}, nil},
		{"live digest only becomes latest", []VersionMeta{other, {Digest: p.Digest, Kind: p.Kind}}, CreatePlan{Existing: 1, Live: true}, nil},
		{"deleted digest revived with the next index", []VersionMeta{{Digest: p.Digest, Kind: p.Kind, Deleted: true}, other},
			CreatePlan{Existing: 0, Index: 2}, nil},
		{"another type of the same kind", []VersionMeta{{Digest: "x", Kind: p.Kind, Base: strp("Model")}}, CreatePlan{}, storage.ErrInvalidArgument},
		{"another type, deleted", []VersionMeta{{Digest: "x", Kind: p.Kind, Base: strp("Model"), Deleted: true}},
			CreatePlan{Existing: -1, Index: 1}, nil},
		{"another kind", []VersionMeta{{Digest: "x", Kind: "op", Base: strp("Model")}}, CreatePlan{Existing: -1, Index: 1}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanCreate("m", c.versions, p)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) || got != c.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, err, c.want, c.err)
			}
		})
	}
}

func TestMatchDeletes(t *testing.T) {
	versions := []VersionMeta{
		{Digest: "d0", Index: 0},
		{Digest: "d1", Index: 1, Deleted: true},
		{Digest: "d2", Index: 2, Latest: true},
	}
	cases := []struct {
		name      string
		selectors []string
		want      []string
		err       error
	}{
		{"all live", nil, []string{"d0", "d2"}, nil},
		{"by digest", []string{"d0"}, []string{"d0"}, nil},
		{"latest", []string{"latest"}, []string{"d2"}, nil},
		{"by index", []string{"v0"}, []string{"d0"}, nil},
		{"one version named twice", []string{"d2", "latest"}, nil, storage.ErrNotFound},
		{"repeated selector", []string{"d0", "d0"}, []string{"d0"}, nil},
		{"deleted version", []string{"d1"}, nil, storage.ErrNotFound},
		{"one selector missing", []string{"d0", "nope"}, nil, storage.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doomed, err := MatchDeletes(storage.ObjDeleteReq{ObjectID: "m", Digests: c.selectors}, versions)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("err = %v; want %v", err, c.err)
			}
			if got := DigestsOf(doomed); err == nil && !slices.Equal(got, c.want) {
				t.Errorf("doomed = %v; want %v", got, c.want)
			}
		})
	}
}

func TestCheckDeleteSize(t *testing.T) {
	ok := storage.ObjDeleteReq{Digests: make([]string, storage.MaxDeleteDigests)}
	tooMany := storage.ObjDeleteReq{Digests: make([]string, storage.MaxDeleteDigests+1)}
	if err := CheckDeleteSize(ok); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if err := CheckDeleteSize(tooMany); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("over the limit: %v", err)
	}
}

func TestNextLatest(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	v := func(d string, idx int64, created time.Time, latest, deleted bool) VersionMeta {
		return VersionMeta{Digest: d, Index: idx, Created: created, Latest: latest, Deleted: deleted}
	}
	versions := []VersionMeta{
		v("a", 0, t0, false, false),
		v("b", 1, t0.Add(time.Hour), false, false),
		v("c", 2, t0.Add(time.Hour), false, false),
		v("d", 3, t0.Add(2*time.Hour), false, true),
		v("e", 4, t0.Add(3*time.Hour), true, false),
	}
	cases := []struct {
		name   string
		doomed []VersionMeta
		want   string // "" when latest stays or none survives
	}{
		{"latest stays", versions[:1], ""},
		{"newest survivor, ties to the higher index", versions[4:], "c"},
		{"doomed survivors skipped", []VersionMeta{versions[2], versions[4]}, "b"},
		{"none survives", []VersionMeta{versions[0], versions[1], versions[2], versions[4]}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, ok := NextLatest(versions, c.doomed)
			if ok != (c.want != "") || next.Digest != c.want {
				t.Errorf("got %q, %v; want %q", next.Digest, ok, c.want)
			}
		})
	}
}

func TestDeleteResult(t *testing.T) {
	res := DeleteResult([]VersionMeta{{Digest: "a", Base: strp("Model")}, {Digest: "b"}})
	if res.NumDeleted != 2 || len(res.DeletedVersions) != 2 || res.DeletedVersions[0].Digest != "a" ||
		*res.DeletedVersions[0].BaseObjectClass != "Model" || res.DeletedVersions[1].BaseObjectClass != nil {
		t.Errorf("res = %+v", res)
	}
}

func TestObjectOrderBy(t *testing.T) {
	cases := []struct {
		name   string
		sortBy []storage.SortBy
		want   string
	}{
		{"default", nil, " ORDER BY created_at asc, version_index asc"},
		{"honoured terms", []storage.SortBy{{Field: "object_id", Direction: "DESC"}, {Field: "created_at", Direction: "asc"}},
			" ORDER BY object_id desc, created_at asc, version_index asc"},
		{"other fields and directions ignored", []storage.SortBy{{Field: "digest", Direction: "asc"}, {Field: "object_id", Direction: "up"}},
			" ORDER BY created_at asc, version_index asc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ObjectOrderBy(c.sortBy); got != c.want {
				t.Errorf("got %q; want %q", got, c.want)
			}
		})
	}
}
