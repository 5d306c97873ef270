package app

import (
	"context"
	"testing"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

// On the scale-out ingest role a delete is answered before a processor
// applies it; its num_deleted still counts only the calls it removes.
func TestDeleteCounterCountsLiveCallsAndDescendants(t *testing.T) {
	ctx := context.Background()
	store, err := duckdb.Open(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	call := func(id, parent string) storage.CallOp {
		return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: id, ParentID: parent, TraceID: "t", OpName: "op", StartedAt: at}}}
	}
	if _, err := store.WriteCallOps(ctx, []storage.CallOp{call("root", ""), call("child", "root"), call("grandchild", "child"), call("other", "")}); err != nil {
		t.Fatal(err)
	}
	var queued []storage.CallOp
	next := consumer.CallsFunc(func(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
		queued = append(queued, ops...)
		return make([]storage.CallOpResult, len(ops)), nil
	})
	d := deleteCounter{next: next, calls: store}
	for _, tc := range []struct {
		ids  []string
		want int
	}{
		{[]string{"root", "missing"}, 3},
		{[]string{"missing"}, 0},
		{[]string{"other", "other"}, 1},
	} {
		res, err := d.ConsumeCalls(ctx, []storage.CallOp{call("new", ""), {Delete: &storage.CallDelete{ProjectID: "e/p", IDs: tc.ids, At: at}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 2 || res[1].NumDeleted != tc.want || res[0].NumDeleted != 0 {
			t.Errorf("delete %v: results %+v, want num_deleted %d", tc.ids, res, tc.want)
		}
	}
	if len(queued) != 6 {
		t.Fatalf("queued %d ops, want every op passed on", len(queued))
	}
}
