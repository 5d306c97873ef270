package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func del(project string, ids ...string) storage.CallOp {
	return storage.CallOp{Delete: &storage.CallDelete{ProjectID: project, IDs: ids, At: base}}
}

// testDeleteCountsOnlyDeleted: num_deleted counts the calls a delete
// removes, never ids that name no call or a call deleted before.
func testDeleteCountsOnlyDeleted(t *testing.T, s callStore) {
	write(t, s, start("e/p", "root", "t", "", "op", base), start("e/p", "kid", "t", "root", "op", base),
		start("e/p", "lone", "t2", "", "op", base))
	for _, tc := range []struct {
		name string
		ids  []string
		want int
	}{
		{"existing root, a repeat and an unknown id", []string{"root", "missing", "root"}, 2},
		{"already deleted", []string{"root", "kid"}, 0},
		{"only unknown ids", []string{"missing", "also-missing"}, 0},
		{"a live call beside a deleted one", []string{"kid", "lone"}, 1},
	} {
		if got := write(t, s, del("e/p", tc.ids...))[0].NumDeleted; got != tc.want {
			t.Errorf("%s: num_deleted = %d, want %d", tc.name, got, tc.want)
		}
	}
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}))
}

// testDeleteSeesSameBatch: a delete reaches calls written earlier in the
// same batch, and a start after it in the batch is a new live call.
func testDeleteSeesSameBatch(t *testing.T, s callStore) {
	res := write(t, s, start("e/p", "a", "t", "", "op", base), start("e/p", "b", "t", "a", "op", base),
		del("e/p", "a"), start("e/p", "c", "t", "a", "op", base))
	if res[2].NumDeleted != 2 {
		t.Fatalf("num_deleted = %d, want 2 (a and its child b)", res[2].NumDeleted)
	}
	wantIDs(t, query(t, s, storage.CallsQuery{ProjectID: "e/p"}), "c")
}

// testObjDeleteStamp: a delete is stamped in UTC at millisecond precision,
// the reference's deleted_at, whatever the backend's column keeps.
func testObjDeleteStamp(t *testing.T, s storage.ObjectStore) {
	ctx := context.Background()
	d := objCreate(t, s, projA, "m", `{"v": 0}`)
	before := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := s.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: projA, ObjectID: "m", Digests: []string{d}}); err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	_, err := s.ReadObject(ctx, storage.ObjReadReq{ProjectID: projA, ObjectID: "m", Digest: d})
	var deleted *storage.ObjectDeletedError
	if !errors.As(err, &deleted) {
		t.Fatalf("read deleted = %v", err)
	}
	at := deleted.DeletedAt
	if at.Location() != time.UTC || !at.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("deleted_at %s is not UTC at millisecond precision", at.Format(time.RFC3339Nano))
	}
	if at.Before(before) || at.After(after) {
		t.Errorf("deleted_at %s is outside the delete call [%s, %s]", at, before, after)
	}
}
