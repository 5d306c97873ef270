package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.AnnotationQueueStore = (*Store)(nil)

// The annotation tables (migrations/0013_annotation_queues.sql) keep
// versioned whole rows read with FINAL. Checks that read before they
// write (a live queue, calls already queued, an annotator's record) run
// under the project's annotations lock, so they hold within a process,
// as object writes do.

const queueColumns = "project_id, id, name, description, scorer_refs, created_at, created_by, updated_at, deleted_at"

// annotationsLock serialises a project's annotation queue writes in this
// process.
func (s *Store) annotationsLock(projectID string) func() {
	return s.projects.lock([]string{"annotations:" + projectID})
}

// CreateAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) CreateAnnotationQueue(ctx context.Context, q storage.AnnotationQueue) error {
	return s.insertQueue(ctx, q)
}

func (s *Store) insertQueue(ctx context.Context, q storage.AnnotationQueue) error {
	refs := q.ScorerRefs
	if refs == nil {
		refs = []string{}
	}
	return s.insertBatch(ctx, "annotation_queues", queueColumns+", version", 1, func(int) []any {
		return []any{q.ProjectID, q.ID, q.Name, q.Description, refs, q.CreatedAt.UTC(), q.CreatedBy,
			q.UpdatedAt.UTC(), utcOrNil(q.DeletedAt), s.versions.next(0)}
	})
}

// QueryAnnotationQueues implements storage.AnnotationQueueStore.
func (s *Store) QueryAnnotationQueues(ctx context.Context, q storage.AnnotationQueuesQuery) ([]storage.AnnotationQueue, error) {
	order, err := storage.AnnotationOrder(q.SortBy, storage.AnnotationQueueSortFields, storage.AnnotationQueueDefaultOrder)
	if err != nil {
		return nil, err
	}
	b := &chBinder{}
	sql := "project_id = " + b.Bind(q.ProjectID, "String") + " AND deleted_at IS NULL"
	if q.Name != nil {
		sql += " AND positionCaseInsensitiveUTF8(name, " + b.Bind(*q.Name, "String") + ") > 0"
	}
	sql += " ORDER BY " + storage.OrderBySQL(order, "")
	if q.Limit > 0 {
		sql += " LIMIT " + b.Bind(q.Limit, "Int64")
	}
	if q.Offset > 0 {
		sql += " OFFSET " + b.Bind(q.Offset, "Int64")
	}
	return s.readQueues(ctx, sql, b.Args()...)
}

// ReadAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) ReadAnnotationQueue(ctx context.Context, projectID, id string) (storage.AnnotationQueue, error) {
	qs, err := s.readQueues(ctx, "project_id = {project:String} AND id = {id:String} AND deleted_at IS NULL",
		clickhouse.Named("project", projectID), clickhouse.Named("id", id))
	return storekit.First(qs, err, fmt.Sprintf("annotation queue %q does not exist in project %q", id, projectID))
}

// UpdateAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) UpdateAnnotationQueue(ctx context.Context, u storage.AnnotationQueueUpdate) (storage.AnnotationQueue, error) {
	defer s.annotationsLock(u.ProjectID)()
	old, err := s.ReadAnnotationQueue(ctx, u.ProjectID, u.ID)
	if err != nil || !u.Changes() {
		return old, err
	}
	q := u.Apply(old)
	return q, s.insertQueue(ctx, q)
}

// DeleteAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) DeleteAnnotationQueue(ctx context.Context, projectID, id string, at time.Time) (storage.AnnotationQueue, error) {
	defer s.annotationsLock(projectID)()
	q, err := s.ReadAnnotationQueue(ctx, projectID, id)
	if err != nil {
		return q, err
	}
	at = at.UTC()
	q.UpdatedAt, q.DeletedAt = at, &at
	return q, s.insertQueue(ctx, q)
}

func (s *Store) readQueues(ctx context.Context, whereAndTail string, args ...any) ([]storage.AnnotationQueue, error) {
	out := []storage.AnnotationQueue{}
	err := s.eachRow(ctx, "read annotation queues", "SELECT "+queueColumns+" FROM annotation_queues FINAL WHERE "+whereAndTail,
		func(rows driver.Rows) error {
			var q storage.AnnotationQueue
			if err := rows.Scan(&q.ProjectID, &q.ID, &q.Name, &q.Description, &q.ScorerRefs, &q.CreatedAt, &q.CreatedBy,
				&q.UpdatedAt, &q.DeletedAt); err != nil {
				return err
			}
			q.CreatedAt, q.UpdatedAt, q.DeletedAt = q.CreatedAt.UTC(), q.UpdatedAt.UTC(), utcOrNil(q.DeletedAt)
			out = append(out, q)
			return nil
		}, args...)
	return out, err
}

// AddAnnotationQueueCalls implements storage.AnnotationQueueStore.
func (s *Store) AddAnnotationQueueCalls(ctx context.Context, req storage.AnnotationQueueAddCalls) (storage.AnnotationQueueAddRes, error) {
	var res storage.AnnotationQueueAddRes
	defer s.annotationsLock(req.ProjectID)()
	if _, err := s.ReadAnnotationQueue(ctx, req.ProjectID, req.QueueID); err != nil {
		return res, err
	}
	found, err := storekit.QueueCalls(ctx, s, req.ProjectID, req.CallIDs)
	if err != nil {
		return res, err
	}
	had := map[string]bool{}
	for _, chunk := range chunks(req.CallIDs) {
		ids, err := s.stringColumn(ctx, "read annotation queue items", `SELECT call_id FROM annotation_queue_items FINAL
			WHERE project_id = {project:String} AND queue_id = {queue:String} AND deleted_at IS NULL
			AND call_id IN {ids:Array(String)}`, clickhouse.Named("project", req.ProjectID),
			clickhouse.Named("queue", req.QueueID), clickhouse.Named("ids", chunk))
		if err != nil {
			return res, err
		}
		for _, id := range ids {
			had[id] = true
		}
	}
	items, dups := storekit.NewQueueItems(req, found, had)
	err = s.insertBatch(ctx, "annotation_queue_items", `project_id, queue_id, id, call_id, call_started_at, call_ended_at,
		call_op_name, call_trace_id, display_fields, added_by, created_at, created_by, updated_at, deleted_at, version`,
		len(items), func(i int) []any {
			it := items[i]
			display := it.DisplayFields
			if display == nil {
				display = []string{}
			}
			return []any{it.ProjectID, it.QueueID, it.ID, it.CallID, it.CallStartedAt, utcOrNil(it.CallEndedAt),
				it.CallOpName, it.CallTraceID, display, it.AddedBy, it.CreatedAt.UTC(), it.CreatedBy, it.UpdatedAt.UTC(),
				nil, s.versions.next(0)}
		})
	if err != nil {
		return res, err
	}
	return storage.AnnotationQueueAddRes{Added: len(items), Duplicates: dups}, nil
}

// QueryAnnotationQueueItems implements storage.AnnotationQueueStore.
func (s *Store) QueryAnnotationQueueItems(ctx context.Context, q storage.AnnotationQueueItemsQuery) ([]storage.AnnotationQueueItem, error) {
	if _, err := s.ReadAnnotationQueue(ctx, q.ProjectID, q.QueueID); err != nil {
		return nil, err
	}
	return s.queueItems(ctx, q)
}

func (s *Store) queueItems(ctx context.Context, q storage.AnnotationQueueItemsQuery) ([]storage.AnnotationQueueItem, error) {
	order, err := storage.AnnotationOrder(q.SortBy, storage.AnnotationQueueItemSortFields, storage.AnnotationQueueItemDefaultOrder)
	if err != nil {
		return nil, err
	}
	b := &chBinder{}
	out := []storage.AnnotationQueueItem{}
	err = s.eachRow(ctx, "read annotation queue items", storekit.QueueItemsSQL(b, q, order), func(rows driver.Rows) error {
		var it storage.AnnotationQueueItem
		var pos int64
		dest := []any{&it.ID, &it.ProjectID, &it.QueueID, &it.CallID, &it.CallStartedAt, &it.CallEndedAt, &it.CallOpName,
			&it.CallTraceID, &it.DisplayFields, &it.AddedBy, &it.AnnotationState, &it.AnnotatorUserID, &it.CreatedAt,
			&it.CreatedBy, &it.UpdatedAt, &it.DeletedAt}
		if q.IncludePosition {
			dest = append(dest, &pos)
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if q.IncludePosition {
			it.PositionInQueue = &pos
		}
		it.CallStartedAt, it.CreatedAt, it.UpdatedAt = it.CallStartedAt.UTC(), it.CreatedAt.UTC(), it.UpdatedAt.UTC()
		it.CallEndedAt, it.DeletedAt = utcOrNil(it.CallEndedAt), utcOrNil(it.DeletedAt)
		out = append(out, it)
		return nil
	}, b.Args()...)
	return out, err
}

// AnnotationQueuesStats implements storage.AnnotationQueueStore.
func (s *Store) AnnotationQueuesStats(ctx context.Context, projectID string, queueIDs []string) ([]storage.AnnotationQueueStats, error) {
	counts := map[string][2]int64{}
	for _, chunk := range chunks(queueIDs) {
		b := &chBinder{}
		err := s.eachRow(ctx, "read annotation queue stats", storekit.QueueStatsSQL(b, projectID, chunk), func(rows driver.Rows) error {
			var id string
			var c [2]int64
			if err := rows.Scan(&id, &c[0], &c[1]); err != nil {
				return err
			}
			counts[id] = c
			return nil
		}, b.Args()...)
		if err != nil {
			return nil, err
		}
	}
	return storekit.QueueStats(queueIDs, counts), nil
}

// UpdateAnnotatorProgress implements storage.AnnotationQueueStore. The
// annotator's record keeps its id and created_at across updates.
func (s *Store) UpdateAnnotatorProgress(ctx context.Context, u storage.AnnotatorProgressUpdate) (storage.AnnotationQueueItem, error) {
	unlock := s.annotationsLock(u.ProjectID)
	item, err := s.progressItem(ctx, u)
	if err != nil {
		unlock()
		return item, err
	}
	type record struct {
		id, state string
		created   time.Time
	}
	var recs []record
	err = s.eachRow(ctx, "read annotator progress", `SELECT id, annotation_state, created_at FROM annotator_queue_items_progress FINAL
		WHERE project_id = {project:String} AND queue_id = {queue:String} AND queue_item_id = {item:String}
		AND annotator_id = {annotator:String}`, func(rows driver.Rows) error {
		var r record
		err := rows.Scan(&r.id, &r.state, &r.created)
		recs = append(recs, r)
		return err
	}, clickhouse.Named("project", u.ProjectID), clickhouse.Named("queue", u.QueueID),
		clickhouse.Named("item", u.ItemID), clickhouse.Named("annotator", u.AnnotatorID))
	if err != nil {
		unlock()
		return item, err
	}
	cur := record{id: u.ProgressID, created: u.At}
	if len(recs) > 0 {
		cur = recs[0]
	}
	noop, err := storage.CheckAnnotatorTransition(cur.state, u.State)
	if err == nil && !noop {
		err = s.insertBatch(ctx, "annotator_queue_items_progress", `project_id, queue_id, queue_item_id, annotator_id, id,
			annotation_state, created_at, updated_at, version`, 1, func(int) []any {
			return []any{u.ProjectID, u.QueueID, u.ItemID, u.AnnotatorID, cur.id, u.State, cur.created.UTC(), u.At.UTC(),
				s.versions.next(0)}
		})
	}
	unlock()
	if err != nil {
		return storage.AnnotationQueueItem{}, err
	}
	return s.progressItem(ctx, u)
}

// progressItem reads the item a progress update names, as an items
// query shows it, or ErrNotFound when its queue or it is not live.
func (s *Store) progressItem(ctx context.Context, u storage.AnnotatorProgressUpdate) (storage.AnnotationQueueItem, error) {
	id := u.ItemID
	items, err := s.QueryAnnotationQueueItems(ctx, storage.AnnotationQueueItemsQuery{ProjectID: u.ProjectID,
		QueueID: u.QueueID, Filter: storage.AnnotationQueueItemsFilter{ID: &id}})
	return storekit.First(items, err, fmt.Sprintf("item %q is not in annotation queue %q", u.ItemID, u.QueueID))
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// chBinder renders the shared annotation queries with server-side
// parameters.
type chBinder struct{ args []any }

func (b *chBinder) Bind(v any, typ string) string {
	name := "a" + strconv.Itoa(len(b.args)+1)
	b.args = append(b.args, clickhouse.Named(name, v))
	return "{" + name + ":" + typ + "}"
}

func (b *chBinder) BindList(vals []string) string { return b.Bind(vals, "Array(String)") }

func (b *chBinder) Table(table, alias string) string { return table + " AS " + alias + " FINAL" }

func (b *chBinder) Args() []any { return b.args }
