package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/storage"
)

func createObj(t *testing.T, s *Store, id, val string) string {
	t.Helper()
	res, err := s.CreateObject(context.Background(), storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
		ProjectID: "e/p", ObjectID: id, Val: json.RawMessage(val)}})
	if err != nil {
		t.Fatalf("CreateObject %s: %v", val, err)
	}
	return res.Digest
}

// TestObjectsConcurrentCreatesNumberVersionsOnce: version_index and is_latest are
// derived from the stored versions, so creates of one object must not
// interleave.
func TestObjectsConcurrentCreatesNumberVersionsOnce(t *testing.T) {
	s := openTestStore(t, Options{})
	const writers, each = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := s.CreateObject(context.Background(), storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
					ProjectID: "e/p", ObjectID: "m", Val: json.RawMessage(fmt.Sprintf(`{"w": %d, "i": %d}`, w, i))}})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.QueryObjects(context.Background(), storage.ObjQueryReq{ProjectID: "e/p"})
	if err != nil {
		t.Fatal(err)
	}
	var indexes []int64
	latest := 0
	for _, o := range res.Objs {
		indexes, latest = append(indexes, o.VersionIndex), latest+o.IsLatest
	}
	slices.Sort(indexes)
	want := make([]int64, writers*each)
	for i := range want {
		want[i] = int64(i)
	}
	if !slices.Equal(indexes, want) || latest != 1 {
		t.Fatalf("version indexes %v with %d latest; want 0..%d and one latest", indexes, latest, writers*each-1)
	}
}

// objectsView is everything the objects API shows of project e/p.
func objectsView(t *testing.T, s *Store) [3]any {
	t.Helper()
	ctx := context.Background()
	res, err := s.QueryObjects(ctx, storage.ObjQueryReq{ProjectID: "e/p", IncludeTagsAndAliases: true, IncludeStorageSize: true})
	if err != nil {
		t.Fatal(err)
	}
	tags, err := s.ListTags(ctx, "e/p")
	if err != nil {
		t.Fatal(err)
	}
	aliases, err := s.ListAliases(ctx, "e/p")
	if err != nil {
		t.Fatal(err)
	}
	return [3]any{res.Objs, tags, aliases}
}

// writeObjectHistory moves latest, labels and deletes versions of "m",
// checking that the deleted version keeps no value, and returns v0's
// digest.
func writeObjectHistory(t *testing.T, s *Store) string {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	d0, d1 := createObj(t, s, "m", `{"v": 0}`), createObj(t, s, "m", `{"v": 1}`)
	d2 := createObj(t, s, "m", `{"v": 2}`)
	tag := storage.ObjTagsReq{ProjectID: "e/p", ObjectID: "m", Digest: d0, Tags: []string{"a", "b"}}
	must(s.AddObjectTags(ctx, tag))
	must(s.RemoveObjectTags(ctx, storage.ObjTagsReq{ProjectID: "e/p", ObjectID: "m", Digest: d0, Tags: []string{"a"}}))
	must(s.AddObjectTags(ctx, tag))
	must(s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: "e/p", ObjectID: "m", Digest: d1, Aliases: []string{"prod", "old"}}))
	must(s.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: "e/p", ObjectID: "m", Digest: d2, Aliases: []string{"prod"}}))
	_, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: "e/p", ObjectID: "m", Digests: []string{d2}})
	must(err)
	var val string
	must(s.conn.QueryRow(ctx, "SELECT val_dump FROM object_versions FINAL WHERE digest = {d:String}", clickhouse.Named("d", d2)).Scan(&val))
	if val != "" {
		t.Fatalf("the deleted version keeps its value %q", val)
	}
	createObj(t, s, "m", `{"v": 2}`) // revived as v3
	createObj(t, s, "m", `{"v": 0}`) // latest moves back to v0
	return d0
}

// TestObjectsMergesKeepWhatReadsSaw: reads go through FINAL, so forcing every
// merge must change nothing they return.
func TestObjectsMergesKeepWhatReadsSaw(t *testing.T) {
	s := openTestStore(t, Options{})
	d0 := writeObjectHistory(t, s)
	before := objectsView(t, s)
	for _, table := range []string{"object_versions", "object_tags", "object_aliases"} {
		if err := s.conn.Exec(context.Background(), "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			t.Fatal(err)
		}
	}
	if after := objectsView(t, s); !reflect.DeepEqual(before, after) {
		t.Fatalf("merging changed what reads return:\nbefore %+v\nafter  %+v", before, after)
	}
	objs := before[0].([]storage.ObjSchema)
	got := fmt.Sprint(len(objs), " ", objs[0].Digest == d0, objs[0].IsLatest, objs[0].Tags, objs[1].Aliases, objs[2].VersionIndex, before[2])
	if want := "3 true 1 [a b] [old] 3 [latest old]"; got != want {
		t.Fatalf("view = %s; want %s", got, want)
	}
}
