package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// applyDelete soft-deletes the live calls among d.IDs and every live
// descendant reachable by parent links (storekit's rules), seeing the
// batch's own earlier writes, and returns how many calls that was.
// Requested ids with no row yet (CallsToDelete has looked them up) get a
// deleted row, so their start, when it lands, is stored deleted.
func (w *callWrite) applyDelete(ctx context.Context, d *storage.CallDelete) (int, error) {
	doomed, err := storekit.CallsToDelete(ctx, callTree{w}, d)
	if err != nil {
		return 0, err
	}
	at := storekit.DeleteStamp(d.At, w.s.opts.Now)
	for _, id := range doomed {
		w.rows[callKey{d.ProjectID, id}].call.DeletedAt = &at
	}
	for _, id := range d.IDs {
		if _, ok := w.rows[callKey{d.ProjectID, id}]; !ok {
			w.pending(d.ProjectID, id).call.DeletedAt = &at
		}
	}
	return len(doomed), nil
}

// callTree is a write's view of the calls as storekit.CallsToDelete walks
// it.
type callTree struct{ w *callWrite }

func (t callTree) LiveCalls(ctx context.Context, projectID string, ids []string) ([]string, error) {
	keys := make([]callKey, len(ids))
	for i, id := range ids {
		keys[i] = callKey{projectID, id}
	}
	if err := t.w.load(ctx, keys); err != nil {
		return nil, err
	}
	var live []string
	for _, k := range keys {
		if r, ok := t.w.rows[k]; ok && r.call.DeletedAt == nil {
			live = append(live, k.id)
		}
	}
	return live, nil
}

// LiveChildren loads the stored children of parents (the parent_id bloom
// filter keeps each lookup cheap) and lists the live ones, the batch's
// own rows included.
func (t callTree) LiveChildren(ctx context.Context, projectID string, parents []string) ([]string, error) {
	w := t.w
	isParent := make(map[string]bool, len(parents))
	for _, p := range parents {
		isParent[p] = p != "" // '' is "no parent", never a call
	}
	for start := 0; start < len(parents); start += lookupChunk {
		chunk := parents[start:min(start+lookupChunk, len(parents))]
		err := w.s.readRows(ctx, "WHERE project_id = {project:String} AND parent_id IN {ids:Array(String)} AND deleted_at IS NULL",
			w.track, clickhouse.Named("project", projectID), clickhouse.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
	}
	var kids []string
	for _, k := range w.order {
		if r := w.rows[k]; k.project == projectID && r.call.DeletedAt == nil && isParent[r.call.ParentID] {
			kids = append(kids, k.id)
		}
	}
	return kids, nil
}
