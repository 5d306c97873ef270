package clickhouse

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// lookupChunk bounds the ids of one lookup query (they travel as one
// Array(String) parameter).
const lookupChunk = 1000

// load reads the stored rows of keys not looked up yet. The call_ids
// index gives the anchors of the ids that exist; only those rows are read
// whole, through FINAL and the calls primary key. New calls, the bulk of
// ingest, cost the index lookup only.
func (w *callWrite) load(ctx context.Context, keys []callKey) error {
	var todo []callKey
	for _, k := range keys {
		if !w.loaded[k] {
			todo = append(todo, k)
			w.loaded[k] = true
		}
	}
	for project, ids := range groupByProject(todo) {
		for start := 0; start < len(ids); start += lookupChunk {
			found, anchors, err := w.s.lookupAnchors(ctx, project, ids[start:min(start+lookupChunk, len(ids))])
			if err != nil {
				return err
			}
			if len(found) == 0 {
				continue
			}
			err = w.s.readRows(ctx, "WHERE project_id = {project:String} AND anchor_at IN {anchors:Array(DateTime64(6, 'UTC'))} "+
				"AND id IN {ids:Array(String)}", func(r callRow) { w.track(r) },
				clickhouse.Named("project", project), clickhouse.Named("anchors", anchors), clickhouse.Named("ids", found))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// lookupAnchors returns the ids among ids that have been stored, and the
// distinct anchors they were stored under.
func (s *Store) lookupAnchors(ctx context.Context, project string, ids []string) ([]string, []time.Time, error) {
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT id, anchor_at FROM call_ids WHERE project_id = {project:String} AND id IN {ids:Array(String)}",
		clickhouse.Named("project", project), clickhouse.Named("ids", ids))
	if err != nil {
		return nil, nil, wrapErr("look up calls", err)
	}
	defer rows.Close()
	var (
		found   []string
		anchors []time.Time
	)
	for rows.Next() {
		var (
			id     string
			anchor time.Time
		)
		if err := rows.Scan(&id, &anchor); err != nil {
			return nil, nil, wrapErr("look up calls", err)
		}
		found, anchors = append(found, id), append(anchors, anchor.UTC())
	}
	return found, anchors, wrapErr("look up calls", rows.Err())
}

// readRows reads the current version of the calls matching where (a
// WHERE clause over the calls table, with named parameters) and hands
// each row to fn.
func (s *Store) readRows(ctx context.Context, where string, fn func(callRow), args ...any) error {
	rows, err := s.conn.Query(ctx, "SELECT "+rowColumnList+" FROM calls FINAL "+where, args...)
	if err != nil {
		return wrapErr("read calls", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return wrapErr("read calls", err)
		}
		fn(r)
	}
	return wrapErr("read calls", rows.Err())
}
