package clickhouse

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/storage"
)

// applyDelete soft-deletes the live calls among d.IDs and every live
// descendant reachable by parent links, walking the tree one level per
// query (the parent_id bloom filter keeps each cheap) and seeing the
// batch's own earlier writes. It returns the size of the id set, counting
// requested ids even when unknown, as the reference server does.
func (w *callWrite) applyDelete(ctx context.Context, d *storage.CallDelete) (int, error) {
	if len(d.IDs) == 0 {
		return 0, nil
	}
	keys := make([]callKey, len(d.IDs))
	for i, id := range d.IDs {
		keys[i] = callKey{d.ProjectID, id}
	}
	if err := w.load(ctx, keys); err != nil {
		return 0, err
	}
	all := make(map[string]bool, len(d.IDs))
	found := map[string]bool{}
	var level []string
	for _, id := range d.IDs {
		all[id] = true
		if r, ok := w.rows[callKey{d.ProjectID, id}]; ok && r.call.DeletedAt == nil && !found[id] {
			found[id] = true
			level = append(level, id)
		}
	}
	for len(level) > 0 {
		var err error
		if level, err = w.children(ctx, d.ProjectID, level, found); err != nil {
			return 0, err
		}
	}
	at := d.At.UTC().Truncate(time.Millisecond)
	if d.At.IsZero() {
		at = w.s.opts.Now().UTC().Truncate(time.Millisecond)
	}
	for id := range found {
		all[id] = true
		w.rows[callKey{d.ProjectID, id}].call.DeletedAt = &at
	}
	return len(all), nil
}

// children loads the live children of parents and returns those not in
// found yet, adding them to found.
func (w *callWrite) children(ctx context.Context, project string, parents []string, found map[string]bool) ([]string, error) {
	isParent := make(map[string]bool, len(parents))
	for _, p := range parents {
		isParent[p] = p != "" // '' is "no parent", never a call
	}
	for start := 0; start < len(parents); start += lookupChunk {
		chunk := parents[start:min(start+lookupChunk, len(parents))]
		err := w.s.readRows(ctx, "WHERE project_id = {project:String} AND parent_id IN {ids:Array(String)} AND deleted_at IS NULL",
			w.track, clickhouse.Named("project", project), clickhouse.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
	}
	var kids []string
	for _, k := range w.order {
		r := w.rows[k]
		if k.project == project && r.call.DeletedAt == nil && isParent[r.call.ParentID] && !found[k.id] {
			found[k.id] = true
			kids = append(kids, k.id)
		}
	}
	return kids, nil
}
