package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func TestStorageSortKeepsNilAndEmptyApart(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []SortBy
		want []storage.SortBy
	}{
		{"absent", nil, nil},
		{"empty", []SortBy{}, []storage.SortBy{}},
		{"terms", []SortBy{{Field: "id", Direction: "desc"}}, []storage.SortBy{{Field: "id", Direction: "desc"}}},
	} {
		if got := StorageSort(tc.in); !reflect.DeepEqual(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%s: %#v; want %#v", tc.name, got, tc.want)
		}
	}
}

func TestObjSchemaJSON(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 600000000, time.UTC)
	deleted := created.Add(time.Second)
	size := int64(7)
	for _, tc := range []struct {
		name string
		in   storage.ObjSchema
		want string
	}{
		{"live, no labels", storage.ObjSchema{ProjectID: "e/p", ObjectID: "o", CreatedAt: created, Digest: "d", Kind: "object", Val: json.RawMessage(`{}`)},
			`{"project_id":"e/p","object_id":"o","created_at":"2025-01-02T03:04:05.600000Z","deleted_at":null,"digest":"d",` +
				`"version_index":0,"is_latest":0,"kind":"object","base_object_class":null,"leaf_object_class":null,"val":{},"wb_user_id":null}`},
		{"deleted, sized, labelled", storage.ObjSchema{ProjectID: "e/p", ObjectID: "o", CreatedAt: created, DeletedAt: &deleted, Digest: "d",
			IsLatest: 1, Kind: "op", Val: json.RawMessage(`1`), SizeBytes: &size, Tags: []string{}, Aliases: []string{"latest"}},
			`{"project_id":"e/p","object_id":"o","created_at":"2025-01-02T03:04:05.600000Z","deleted_at":"2025-01-02T03:04:06.600000Z",` +
				`"digest":"d","version_index":0,"is_latest":1,"kind":"op","base_object_class":null,"leaf_object_class":null,"val":1,` +
				`"wb_user_id":null,"size_bytes":7,"tags":[],"aliases":["latest"]}`},
	} {
		got, err := json.Marshal(NewObjSchema(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s %v\nwant %s", tc.name, got, err, tc.want)
		}
	}
}

func TestStorageUpdates(t *testing.T) {
	in := []TableUpdateSpec{{Append: &TableAppend{Row: json.RawMessage(`{"a":1}`)}}, {Pop: &TablePop{Index: 2}},
		{Insert: &TableInsert{Index: 1, Row: json.RawMessage(`{}`)}}, {}}
	want := []storage.TableUpdateSpec{{Append: &storage.TableAppend{Row: json.RawMessage(`{"a":1}`)}}, {Pop: &storage.TablePop{Index: 2}},
		{Insert: &storage.TableInsert{Index: 1, Row: json.RawMessage(`{}`)}}, {}}
	if got := StorageUpdates(in); !reflect.DeepEqual(got, want) {
		t.Errorf("StorageUpdates = %+v; want %+v", got, want)
	}
	if (*ObjectVersionFilter)(nil).Storage() != nil || (*TableRowFilter)(nil).Storage() != nil {
		t.Error("an absent filter became a filter")
	}
}
