package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/tablesql"
)

var _ storage.FeedbackStore = (*Store)(nil)

const feedbackInsert = `INSERT OR REPLACE INTO feedback (project_id, id, weave_ref, feedback_type, payload, creator,
	created_at, wb_user_id, annotation_ref, runnable_ref, call_ref, trigger_ref, queue_id, extra)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// CreateFeedback implements storage.FeedbackStore.
func (s *Store) CreateFeedback(ctx context.Context, rows []storage.Feedback) error {
	if len(rows) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error { return insertFeedback(ctx, tx, rows) })
}

func insertFeedback(ctx context.Context, tx *sql.Tx, rows []storage.Feedback) error {
	stmt, err := tx.PrepareContext(ctx, feedbackInsert)
	if err != nil {
		return fmt.Errorf("prepare feedback insert: %w", err)
	}
	defer stmt.Close()
	for _, f := range rows {
		if f.ProjectID == "" || f.ID == "" || !json.Valid(f.Payload) {
			return fmt.Errorf("feedback %q needs a project, an id and a JSON payload: %w", f.ID, storage.ErrInvalidArgument)
		}
		var extra *string
		if f.Extra != nil {
			e := string(f.Extra)
			extra = &e
		}
		_, err := stmt.ExecContext(ctx, f.ProjectID, f.ID, f.WeaveRef, f.FeedbackType, string(f.Payload), f.Creator,
			f.CreatedAt.UTC(), f.WBUserID, f.AnnotationRef, f.RunnableRef, f.CallRef, f.TriggerRef, f.QueueID, extra)
		if err != nil {
			return fmt.Errorf("insert feedback %s: %w", f.ID, err)
		}
	}
	return nil
}

// PurgeFeedback implements storage.FeedbackStore.
func (s *Store) PurgeFeedback(ctx context.Context, projectID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error { return deleteFeedback(ctx, tx, projectID, ids) })
}

func deleteFeedback(ctx context.Context, tx *sql.Tx, projectID string, ids []string) error {
	args := append([]any{projectID}, anyStrings(ids)...)
	_, err := tx.ExecContext(ctx, "DELETE FROM feedback WHERE project_id = ? AND id IN ("+qmarks(len(ids))+")", args...)
	if err != nil {
		return fmt.Errorf("purge feedback: %w", err)
	}
	return nil
}

// ReplaceFeedback implements storage.FeedbackStore.
func (s *Store) ReplaceFeedback(ctx context.Context, projectID, oldID string, row storage.Feedback) error {
	if row.ProjectID != projectID {
		return fmt.Errorf("replacement feedback belongs to project %q, not %q: %w", row.ProjectID, projectID, storage.ErrInvalidArgument)
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := deleteFeedback(ctx, tx, projectID, []string{oldID}); err != nil {
			return err
		}
		return insertFeedback(ctx, tx, []storage.Feedback{row})
	})
}

// QueryFeedback implements storage.FeedbackStore.
func (s *Store) QueryFeedback(ctx context.Context, q storage.FeedbackQuery) (storage.FeedbackQueryRes, error) {
	where, err := querylang.Parse(q.Where)
	if err != nil {
		return storage.FeedbackQueryRes{}, err
	}
	tq := tablesql.Query{Scope: []tablesql.Scope{{Column: "project_id", Value: q.ProjectID}},
		Fields: q.Fields, Where: where, SortBy: q.SortBy, Limit: q.Limit, Offset: q.Offset}
	rows, err := s.tableRows(ctx, tablesql.FeedbackTable(), tq)
	if err != nil {
		return storage.FeedbackQueryRes{}, fmt.Errorf("feedback query: %w", err)
	}
	count, err := s.tableCount(ctx, tablesql.FeedbackTable(), tq)
	if err != nil {
		return storage.FeedbackQueryRes{}, fmt.Errorf("feedback count: %w", err)
	}
	return storage.FeedbackQueryRes{Result: rows, TotalCount: count}, nil
}

// feedbackOnCall are the fields of a summary.weave.feedback entry.
var feedbackOnCall = []string{"id", "feedback_type", "weave_ref", "payload", "creator", "created_at",
	"wb_user_id", "runnable_ref", "call_ref", "trigger_ref", "annotation_ref"}

// FeedbackForRefs implements storage.FeedbackStore.
func (s *Store) FeedbackForRefs(ctx context.Context, projectID string, refs []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if len(refs) == 0 {
		return out, nil
	}
	tq := tablesql.Query{Scope: []tablesql.Scope{{Column: "project_id", Value: projectID}},
		Fields: feedbackOnCall, Where: &querylang.In{Operand: &querylang.GetField{Path: "weave_ref"}, List: literals(refs)},
		SortBy: []storage.SortBy{{Field: "created_at", Direction: "asc"}, {Field: "id", Direction: "asc"}}}
	rows, err := s.tableRows(ctx, tablesql.FeedbackTable(), tq)
	if err != nil {
		return nil, fmt.Errorf("feedback of calls: %w", err)
	}
	lists := map[string][]json.RawMessage{}
	for _, r := range rows {
		var key struct {
			WeaveRef string `json:"weave_ref"`
		}
		if err := json.Unmarshal(r, &key); err != nil {
			return nil, fmt.Errorf("feedback of calls: %w", err)
		}
		lists[key.WeaveRef] = append(lists[key.WeaveRef], r)
	}
	for ref, list := range lists {
		if out[ref], err = json.Marshal(list); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func literals(vals []string) []querylang.Expr {
	out := make([]querylang.Expr, len(vals))
	for i, v := range vals {
		out[i] = &querylang.Literal{Value: v}
	}
	return out
}

// tableRows runs a tablesql select and renders each row as JSON.
func (s *Store) tableRows(ctx context.Context, t tablesql.Table, q tablesql.Query) ([]json.RawMessage, error) {
	st, outs, err := tablesql.Select(sqlgen.NewDuckDB(), t, q)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []json.RawMessage{}
	vals := make([]any, len(outs))
	ptrs := make([]any, len(outs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		obj, err := tablesql.RowJSON(outs, vals)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, rows.Err()
}

func (s *Store) tableCount(ctx context.Context, t tablesql.Table, q tablesql.Query) (int64, error) {
	st, err := tablesql.Count(sqlgen.NewDuckDB(), t, q)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.db.QueryRowContext(ctx, st.SQL, st.Args...).Scan(&n)
	return n, err
}

func qmarks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anyStrings(vals []string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}
