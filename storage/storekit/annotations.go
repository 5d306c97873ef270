package storekit

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// callLookupChunk bounds the call ids of one calls query a queue's add
// makes, so a large add stays within what a backend binds in one
// statement.
const callLookupChunk = 1000

// QueueCalls returns the live calls of the project among ids, keyed by
// id, with the fields an annotation queue item copies. Ids of another
// project, deleted calls and unknown ids are absent.
func QueueCalls(ctx context.Context, calls storage.CallReader, projectID string, ids []string) (map[string]storage.Call, error) {
	out := make(map[string]storage.Call, len(ids))
	for chunk := range slices.Chunk(ids, callLookupChunk) {
		q := storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{CallIDs: chunk},
			Columns: []string{"id", "trace_id", "op_name", "started_at", "ended_at"}}
		for c, err := range calls.QueryCalls(ctx, q) {
			if err != nil {
				return nil, err
			}
			out[c.ID] = c.Call
		}
	}
	return out, nil
}

// NewQueueItems makes the items an add stores: one per distinct id of
// req that found is holding and had is not, in the order of req.CallIDs.
// It returns them with the number of distinct ids had held.
func NewQueueItems(req storage.AnnotationQueueAddCalls, found map[string]storage.Call, had map[string]bool) ([]storage.AnnotationQueueItem, int) {
	var items []storage.AnnotationQueueItem
	seen := map[string]bool{}
	dups := 0
	for _, id := range req.CallIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		if had[id] {
			dups++
			continue
		}
		c, ok := found[id]
		if !ok {
			continue
		}
		addedBy := req.AddedBy
		items = append(items, storage.AnnotationQueueItem{ProjectID: req.ProjectID, ID: storage.NewAnnotationID(),
			QueueID: req.QueueID, CallID: id, CallStartedAt: c.StartedAt.UTC(), CallEndedAt: utcPtr(c.EndedAt),
			CallOpName: c.OpName, CallTraceID: c.TraceID, DisplayFields: slices.Clone(req.DisplayFields),
			AddedBy: &addedBy, CreatedAt: req.At, CreatedBy: req.AddedBy, UpdatedAt: req.At})
	}
	return items, dups
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// QueueBinder renders a backend's parts of the annotation queue queries:
// bound parameters in its syntax, and the tables as it reads their
// current rows.
type QueueBinder interface {
	// Bind binds v, of the ClickHouse type typ, and returns its
	// placeholder.
	Bind(v any, typ string) string
	// BindList binds vals (never empty) as the right side of IN.
	BindList(vals []string) string
	// Table renders a FROM item reading table under alias.
	Table(table, alias string) string
	// Args are the values bound so far, in placeholder order.
	Args() []any
}

// QueueItemColumns are the columns an items query selects, in scan order;
// position_in_queue follows when asked for.
const QueueItemColumns = `id, project_id, queue_id, call_id, call_started_at, call_ended_at, call_op_name,
	call_trace_id, display_fields, added_by, annotation_state, annotator_user_id, created_at, created_by,
	updated_at, deleted_at`

// QueueItemsSQL renders an items query: the queue's live items that
// match the filter's item fields, each with the state and annotator of
// its most recent progress record (the greatest updated_at, then id),
// numbered in the query's order, then filtered by state and paged. The
// order must come from storage.AnnotationOrder.
func QueueItemsSQL(b QueueBinder, q storage.AnnotationQueueItemsQuery, order []storage.SortBy) string {
	project, queue := b.Bind(q.ProjectID, "String"), b.Bind(q.QueueID, "String")
	where := []string{"i.project_id = " + project, "i.queue_id = " + queue, "i.deleted_at IS NULL"}
	for _, f := range []struct {
		col string
		v   *string
	}{{"id", q.Filter.ID}, {"call_id", q.Filter.CallID}, {"call_op_name", q.Filter.CallOpName},
		{"call_trace_id", q.Filter.CallTraceID}, {"added_by", q.Filter.AddedBy}} {
		if f.v != nil {
			where = append(where, "i."+f.col+" = "+b.Bind(*f.v, "String"))
		}
	}
	orderBy := storage.OrderBySQL(order, "")
	sql := `WITH latest AS (
		SELECT queue_item_id, annotation_state AS state, annotator_id AS annotator,
		       row_number() OVER (PARTITION BY queue_item_id ORDER BY updated_at DESC, id DESC) AS rn
		FROM ` + b.Table("annotator_queue_items_progress", "p") + `
		WHERE p.project_id = ` + project + ` AND p.queue_id = ` + queue + `
	), items AS (
		SELECT i.id AS id, i.project_id AS project_id, i.queue_id AS queue_id, i.call_id AS call_id,
		       i.call_started_at AS call_started_at, i.call_ended_at AS call_ended_at,
		       i.call_op_name AS call_op_name, i.call_trace_id AS call_trace_id,
		       i.display_fields AS display_fields, i.added_by AS added_by,
		       CASE WHEN l.state IS NULL OR l.state = '' THEN '` + storage.AnnotationUnstarted + `' ELSE l.state END AS annotation_state,
		       coalesce(l.annotator, '') AS annotator_user_id,
		       i.created_at AS created_at, i.created_by AS created_by, i.updated_at AS updated_at,
		       i.deleted_at AS deleted_at
		FROM ` + b.Table("annotation_queue_items", "i") + `
		LEFT JOIN (SELECT queue_item_id, state, annotator FROM latest WHERE rn = 1) AS l ON l.queue_item_id = i.id
		WHERE ` + strings.Join(where, " AND ") + `
	), numbered AS (
		SELECT *, CAST(row_number() OVER (ORDER BY ` + orderBy + `) AS BIGINT) AS position_in_queue FROM items
	)
	SELECT ` + QueueItemColumns
	if q.IncludePosition {
		sql += ", position_in_queue"
	}
	sql += " FROM numbered"
	if len(q.Filter.AnnotationStates) > 0 {
		sql += " WHERE annotation_state IN " + b.BindList(q.Filter.AnnotationStates)
	}
	sql += " ORDER BY " + orderBy
	if q.Limit > 0 {
		sql += " LIMIT " + b.Bind(q.Limit, "Int64")
	}
	if q.Offset > 0 {
		sql += " OFFSET " + b.Bind(q.Offset, "Int64")
	}
	return sql
}

// QueueStatsSQL renders the stats of the queues ids (never empty): per
// queue_id with live items, their count and how many of them an
// annotator completed or skipped.
func QueueStatsSQL(b QueueBinder, projectID string, ids []string) string {
	project, list := b.Bind(projectID, "String"), b.BindList(ids)
	done := b.BindList([]string{storage.AnnotationCompleted, storage.AnnotationSkipped})
	return `SELECT i.queue_id,
		CAST(count(*) AS BIGINT),
		CAST(count(*) FILTER (WHERE i.id IN (
			SELECT queue_item_id FROM ` + b.Table("annotator_queue_items_progress", "p") + `
			WHERE p.project_id = ` + project + ` AND p.queue_id IN ` + list + ` AND p.annotation_state IN ` + done + `
		)) AS BIGINT)
	FROM ` + b.Table("annotation_queue_items", "i") + `
	WHERE i.project_id = ` + project + ` AND i.queue_id IN ` + list + ` AND i.deleted_at IS NULL
	GROUP BY i.queue_id`
}

// QueueStats answers one entry per distinct id of ids, in order, from
// the counts QueueStatsSQL read.
func QueueStats(ids []string, counts map[string][2]int64) []storage.AnnotationQueueStats {
	out := []storage.AnnotationQueueStats{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		c := counts[id]
		out = append(out, storage.AnnotationQueueStats{QueueID: id, TotalItems: c[0], CompletedItems: c[1]})
	}
	return out
}
