package app

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// deleteCounter answers a delete's num_deleted on the scale-out ingest
// role, where a processor applies the delete only after the client was
// answered: before queueing the delete it counts, in the store, the live
// calls the delete will remove (the ids that name live calls and their
// live descendants), by the same rule the store applies.
type deleteCounter struct {
	next  consumer.Calls
	calls storage.CallReader
}

func (d deleteCounter) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	counts := make(map[int]int)
	for i, op := range ops {
		if op.Delete == nil {
			continue
		}
		doomed, err := storekit.CallsToDelete(ctx, readerTree{d.calls}, op.Delete)
		if err != nil {
			return nil, fmt.Errorf("%w: counting the calls a delete removes: %w", storage.ErrUnavailable, err)
		}
		counts[i] = len(doomed)
	}
	res, err := d.next.ConsumeCalls(ctx, ops)
	if err != nil {
		return nil, err
	}
	if len(res) < len(ops) {
		res = append(res, make([]storage.CallOpResult, len(ops)-len(res))...)
	}
	for i, n := range counts {
		res[i].NumDeleted = n
	}
	return res, nil
}

// readerTree walks calls through the read contract.
type readerTree struct{ calls storage.CallReader }

func (t readerTree) LiveCalls(ctx context.Context, project string, ids []string) ([]string, error) {
	return t.ids(ctx, storage.CallsQuery{ProjectID: project, Filter: storage.CallsFilter{CallIDs: ids}})
}

func (t readerTree) LiveChildren(ctx context.Context, project string, parents []string) ([]string, error) {
	return t.ids(ctx, storage.CallsQuery{ProjectID: project, Filter: storage.CallsFilter{ParentIDs: parents}})
}

func (t readerTree) ids(ctx context.Context, q storage.CallsQuery) ([]string, error) {
	q.Columns, q.SortBy = []string{"id"}, []storage.SortBy{}
	var out []string
	for c, err := range t.calls.QueryCalls(ctx, q) {
		if err != nil {
			return nil, err
		}
		out = append(out, c.ID)
	}
	return out, nil
}
