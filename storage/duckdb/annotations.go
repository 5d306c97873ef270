package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.AnnotationQueueStore = (*Store)(nil)

// Annotation queues live in the main catalog
// (migrations/0016_annotation_queues.sql). Checks that read before they
// write (a live queue, calls already queued, an annotator's record) run
// in the write transaction, under writeMu, so they hold.

const queueColumns = "project_id, id, name, description, scorer_refs, created_at, created_by, updated_at, deleted_at"

// CreateAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) CreateAnnotationQueue(ctx context.Context, q storage.AnnotationQueue) error {
	refs, err := jsonList(q.ScorerRefs)
	if err != nil {
		return err
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO annotation_queues (`+queueColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
			q.ProjectID, q.ID, q.Name, q.Description, refs, q.CreatedAt.UTC(), q.CreatedBy, q.UpdatedAt.UTC())
		if err != nil {
			return fmt.Errorf("create annotation queue: %w", err)
		}
		return nil
	})
}

// QueryAnnotationQueues implements storage.AnnotationQueueStore.
func (s *Store) QueryAnnotationQueues(ctx context.Context, q storage.AnnotationQueuesQuery) ([]storage.AnnotationQueue, error) {
	order, err := storage.AnnotationOrder(q.SortBy, storage.AnnotationQueueSortFields, storage.AnnotationQueueDefaultOrder)
	if err != nil {
		return nil, err
	}
	where, args := "project_id = ? AND deleted_at IS NULL", []any{q.ProjectID}
	if q.Name != nil {
		where += " AND contains(lower(name), lower(?))"
		args = append(args, *q.Name)
	}
	tail := " ORDER BY " + storage.OrderBySQL(order, "")
	if q.Limit > 0 {
		tail += " LIMIT ?"
		args = append(args, q.Limit)
	}
	if q.Offset > 0 {
		tail += " OFFSET ?"
		args = append(args, q.Offset)
	}
	return readQueues(ctx, s.db, where+tail, args...)
}

// ReadAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) ReadAnnotationQueue(ctx context.Context, projectID, id string) (storage.AnnotationQueue, error) {
	return liveQueue(ctx, s.db, projectID, id)
}

// UpdateAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) UpdateAnnotationQueue(ctx context.Context, u storage.AnnotationQueueUpdate) (storage.AnnotationQueue, error) {
	var out storage.AnnotationQueue
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		old, err := liveQueue(ctx, tx, u.ProjectID, u.ID)
		if err != nil || !u.Changes() {
			out = old
			return err
		}
		out = u.Apply(old)
		refs, err := jsonList(out.ScorerRefs)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE annotation_queues SET name = ?, description = ?, scorer_refs = ?, updated_at = ?
			WHERE project_id = ? AND id = ?`, out.Name, out.Description, refs, out.UpdatedAt.UTC(), u.ProjectID, u.ID)
		if err != nil {
			return fmt.Errorf("update annotation queue %s: %w", u.ID, err)
		}
		return nil
	})
	return out, err
}

// DeleteAnnotationQueue implements storage.AnnotationQueueStore.
func (s *Store) DeleteAnnotationQueue(ctx context.Context, projectID, id string, at time.Time) (storage.AnnotationQueue, error) {
	var out storage.AnnotationQueue
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		q, err := liveQueue(ctx, tx, projectID, id)
		if err != nil {
			return err
		}
		at = at.UTC()
		q.UpdatedAt, q.DeletedAt = at, &at
		out = q
		_, err = tx.ExecContext(ctx, `UPDATE annotation_queues SET updated_at = ?, deleted_at = ? WHERE project_id = ? AND id = ?`,
			at, at, projectID, id)
		if err != nil {
			return fmt.Errorf("delete annotation queue %s: %w", id, err)
		}
		return nil
	})
	return out, err
}

// AddAnnotationQueueCalls implements storage.AnnotationQueueStore. The
// calls are looked up first, outside the write; which of them the queue
// already holds is decided inside it.
func (s *Store) AddAnnotationQueueCalls(ctx context.Context, req storage.AnnotationQueueAddCalls) (storage.AnnotationQueueAddRes, error) {
	var res storage.AnnotationQueueAddRes
	if _, err := s.ReadAnnotationQueue(ctx, req.ProjectID, req.QueueID); err != nil {
		return res, err
	}
	found, err := storekit.QueueCalls(ctx, s, req.ProjectID, req.CallIDs)
	if err != nil {
		return res, err
	}
	display, err := jsonList(req.DisplayFields)
	if err != nil {
		return res, err
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := liveQueue(ctx, tx, req.ProjectID, req.QueueID); err != nil {
			return err
		}
		had, err := queuedCalls(ctx, tx, req)
		if err != nil {
			return err
		}
		items, dups := storekit.NewQueueItems(req, found, had)
		res = storage.AnnotationQueueAddRes{Added: len(items), Duplicates: dups}
		values := make([][]any, len(items))
		for i, it := range items {
			values[i] = []any{it.ProjectID, it.QueueID, it.ID, it.CallID, it.CallStartedAt,
				nullTimePtr(it.CallEndedAt), it.CallOpName, it.CallTraceID, display, it.AddedBy, it.CreatedAt.UTC(),
				it.CreatedBy, it.UpdatedAt.UTC()}
		}
		err = insertValues(ctx, tx, `INSERT INTO annotation_queue_items (project_id, queue_id, id, call_id,
			call_started_at, call_ended_at, call_op_name, call_trace_id, display_fields, added_by, created_at, created_by,
			updated_at)`, "", values)
		if err != nil {
			return fmt.Errorf("insert annotation queue items: %w", err)
		}
		return nil
	})
	return res, err
}

// queuedCalls returns which of req's call ids the queue holds live items of.
func queuedCalls(ctx context.Context, tx *sql.Tx, req storage.AnnotationQueueAddCalls) (map[string]bool, error) {
	had := map[string]bool{}
	if len(req.CallIDs) == 0 {
		return had, nil
	}
	args := append([]any{req.ProjectID, req.QueueID}, anyStrings(req.CallIDs)...)
	ids, err := queryNames(ctx, tx, `SELECT call_id FROM annotation_queue_items WHERE project_id = ? AND queue_id = ?
		AND deleted_at IS NULL AND call_id IN (`+qmarks(len(req.CallIDs))+`)`, args...)
	for _, id := range ids {
		had[id] = true
	}
	return had, err
}

// QueryAnnotationQueueItems implements storage.AnnotationQueueStore.
func (s *Store) QueryAnnotationQueueItems(ctx context.Context, q storage.AnnotationQueueItemsQuery) ([]storage.AnnotationQueueItem, error) {
	if _, err := s.ReadAnnotationQueue(ctx, q.ProjectID, q.QueueID); err != nil {
		return nil, err
	}
	return queueItems(ctx, s.db, q)
}

func queueItems(ctx context.Context, db queryer, q storage.AnnotationQueueItemsQuery) ([]storage.AnnotationQueueItem, error) {
	order, err := storage.AnnotationOrder(q.SortBy, storage.AnnotationQueueItemSortFields, storage.AnnotationQueueItemDefaultOrder)
	if err != nil {
		return nil, err
	}
	b := &duckBinder{}
	rows, err := db.QueryContext(ctx, storekit.QueueItemsSQL(b, q, order), b.args...)
	if err != nil {
		return nil, fmt.Errorf("read annotation queue items: %w", err)
	}
	defer rows.Close()
	out := []storage.AnnotationQueueItem{}
	for rows.Next() {
		var it storage.AnnotationQueueItem
		var ended, deleted sql.NullTime
		var addedBy sql.NullString
		var display string
		var pos int64
		dest := []any{&it.ID, &it.ProjectID, &it.QueueID, &it.CallID, &it.CallStartedAt, &ended, &it.CallOpName,
			&it.CallTraceID, &display, &addedBy, &it.AnnotationState, &it.AnnotatorUserID, &it.CreatedAt, &it.CreatedBy,
			&it.UpdatedAt, &deleted}
		if q.IncludePosition {
			dest = append(dest, &pos)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read annotation queue items: %w", err)
		}
		if err := json.Unmarshal([]byte(display), &it.DisplayFields); err != nil {
			return nil, fmt.Errorf("annotation queue item %s display_fields: %w", it.ID, err)
		}
		if q.IncludePosition {
			it.PositionInQueue = &pos
		}
		it.CallEndedAt, it.DeletedAt, it.AddedBy = timePtr(ended), timePtr(deleted), strPtr(addedBy)
		it.CallStartedAt, it.CreatedAt, it.UpdatedAt = it.CallStartedAt.UTC(), it.CreatedAt.UTC(), it.UpdatedAt.UTC()
		out = append(out, it)
	}
	return out, rows.Err()
}

// AnnotationQueuesStats implements storage.AnnotationQueueStore.
func (s *Store) AnnotationQueuesStats(ctx context.Context, projectID string, queueIDs []string) ([]storage.AnnotationQueueStats, error) {
	counts := map[string][2]int64{}
	if len(queueIDs) > 0 {
		b := &duckBinder{}
		rows, err := s.db.QueryContext(ctx, storekit.QueueStatsSQL(b, projectID, queueIDs), b.args...)
		if err != nil {
			return nil, fmt.Errorf("read annotation queue stats: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var c [2]int64
			if err := rows.Scan(&id, &c[0], &c[1]); err != nil {
				return nil, fmt.Errorf("read annotation queue stats: %w", err)
			}
			counts[id] = c
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read annotation queue stats: %w", err)
		}
	}
	return storekit.QueueStats(queueIDs, counts), nil
}

// UpdateAnnotatorProgress implements storage.AnnotationQueueStore.
func (s *Store) UpdateAnnotatorProgress(ctx context.Context, u storage.AnnotatorProgressUpdate) (storage.AnnotationQueueItem, error) {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := liveQueue(ctx, tx, u.ProjectID, u.QueueID); err != nil {
			return err
		}
		items, err := queryNames(ctx, tx, `SELECT id FROM annotation_queue_items WHERE project_id = ? AND queue_id = ?
			AND id = ? AND deleted_at IS NULL`, u.ProjectID, u.QueueID, u.ItemID)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return fmt.Errorf("item %q is not in annotation queue %q: %w", u.ItemID, u.QueueID, storage.ErrNotFound)
		}
		states, err := queryNames(ctx, tx, `SELECT annotation_state FROM annotator_queue_items_progress
			WHERE project_id = ? AND queue_item_id = ? AND annotator_id = ?`, u.ProjectID, u.ItemID, u.AnnotatorID)
		if err != nil {
			return err
		}
		current := ""
		if len(states) > 0 {
			current = states[0]
		}
		noop, err := storage.CheckAnnotatorTransition(current, u.State)
		if err != nil || noop {
			return err
		}
		if current == "" {
			_, err = tx.ExecContext(ctx, `INSERT INTO annotator_queue_items_progress (project_id, queue_id, queue_item_id,
				annotator_id, id, annotation_state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				u.ProjectID, u.QueueID, u.ItemID, u.AnnotatorID, u.ProgressID, u.State, u.At.UTC(), u.At.UTC())
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE annotator_queue_items_progress SET annotation_state = ?, updated_at = ?
				WHERE project_id = ? AND queue_item_id = ? AND annotator_id = ?`,
				u.State, u.At.UTC(), u.ProjectID, u.ItemID, u.AnnotatorID)
		}
		if err != nil {
			return fmt.Errorf("write annotator progress of item %s: %w", u.ItemID, err)
		}
		return nil
	})
	if err != nil {
		return storage.AnnotationQueueItem{}, err
	}
	id := u.ItemID
	items, err := queueItems(ctx, s.db, storage.AnnotationQueueItemsQuery{ProjectID: u.ProjectID, QueueID: u.QueueID,
		Filter: storage.AnnotationQueueItemsFilter{ID: &id}})
	return storekit.First(items, err, fmt.Sprintf("item %q is not in annotation queue %q", u.ItemID, u.QueueID))
}

// liveQueue reads a queue that is not deleted, or ErrNotFound.
func liveQueue(ctx context.Context, db queryer, projectID, id string) (storage.AnnotationQueue, error) {
	qs, err := readQueues(ctx, db, "project_id = ? AND id = ? AND deleted_at IS NULL", projectID, id)
	return storekit.First(qs, err, fmt.Sprintf("annotation queue %q does not exist in project %q", id, projectID))
}

func readQueues(ctx context.Context, db queryer, whereAndTail string, args ...any) ([]storage.AnnotationQueue, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+queueColumns+` FROM annotation_queues WHERE `+whereAndTail, args...)
	if err != nil {
		return nil, fmt.Errorf("read annotation queues: %w", err)
	}
	defer rows.Close()
	out := []storage.AnnotationQueue{}
	for rows.Next() {
		var q storage.AnnotationQueue
		var refs string
		var deleted sql.NullTime
		if err := rows.Scan(&q.ProjectID, &q.ID, &q.Name, &q.Description, &refs, &q.CreatedAt, &q.CreatedBy,
			&q.UpdatedAt, &deleted); err != nil {
			return nil, fmt.Errorf("read annotation queues: %w", err)
		}
		if err := json.Unmarshal([]byte(refs), &q.ScorerRefs); err != nil {
			return nil, fmt.Errorf("annotation queue %s scorer_refs: %w", q.ID, err)
		}
		q.CreatedAt, q.UpdatedAt, q.DeletedAt = q.CreatedAt.UTC(), q.UpdatedAt.UTC(), timePtr(deleted)
		out = append(out, q)
	}
	return out, rows.Err()
}

// jsonList encodes a list column; nil is stored as [].
func jsonList(vals []string) (string, error) {
	if vals == nil {
		vals = []string{}
	}
	b, err := json.Marshal(vals)
	return string(b), err
}

// duckBinder renders the shared annotation queries with numbered
// placeholders ($1, $2, ...), which a query may repeat.
type duckBinder struct{ args []any }

func (b *duckBinder) Bind(v any, _ string) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

func (b *duckBinder) BindList(vals []string) string {
	ps := make([]string, len(vals))
	for i, v := range vals {
		ps[i] = b.Bind(v, "String")
	}
	return "(" + strings.Join(ps, ", ") + ")"
}

func (b *duckBinder) Table(table, alias string) string { return table + " AS " + alias }

func (b *duckBinder) Args() []any { return b.args }
