package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/storage/tablesql"
)

var _ storage.FeedbackStore = (*Store)(nil)

const feedbackColumns = `project_id, id, weave_ref, feedback_type, payload, creator, created_at, wb_user_id,
	annotation_ref, runnable_ref, call_ref, trigger_ref, queue_id, extra, version`

// CreateFeedback implements storage.FeedbackStore.
func (s *Store) CreateFeedback(ctx context.Context, rows []storage.Feedback) error {
	if len(rows) == 0 {
		return nil
	}
	projects := make([]string, len(rows))
	for i, f := range rows {
		if f.ProjectID == "" || f.ID == "" || !json.Valid(f.Payload) {
			return fmt.Errorf("feedback %q needs a project, an id and a JSON payload: %w", f.ID, storage.ErrInvalidArgument)
		}
		projects[i] = f.ProjectID
	}
	unlock := s.projects.lock(projects)
	defer unlock()
	return s.putFeedback(ctx, rows, nil)
}

// ReplaceFeedback implements storage.FeedbackStore.
func (s *Store) ReplaceFeedback(ctx context.Context, projectID, oldID string, row storage.Feedback) error {
	if row.ProjectID != projectID {
		return fmt.Errorf("replacement feedback belongs to project %q, not %q: %w", row.ProjectID, projectID, storage.ErrInvalidArgument)
	}
	if row.ID == "" || !json.Valid(row.Payload) {
		return fmt.Errorf("feedback %q needs an id and a JSON payload: %w", row.ID, storage.ErrInvalidArgument)
	}
	unlock := s.projects.lock([]string{projectID})
	defer unlock()
	return s.putFeedback(ctx, []storage.Feedback{row}, map[string][]string{projectID: {oldID}})
}

// PurgeFeedback implements storage.FeedbackStore.
func (s *Store) PurgeFeedback(ctx context.Context, projectID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	unlock := s.projects.lock([]string{projectID})
	defer unlock()
	return s.putFeedback(ctx, nil, map[string][]string{projectID: ids})
}

// putFeedback inserts rows in one INSERT, with a version above every
// stored copy of their ids and of the ids in gone (per project), and
// then deletes those copies. Only ids found stored are deleted: a
// lightweight DELETE costs a mutation, so none runs for fresh ids. The
// caller holds the projects' locks.
func (s *Store) putFeedback(ctx context.Context, rows []storage.Feedback, gone map[string][]string) error {
	ids := map[string][]string{}
	for _, f := range rows {
		ids[f.ProjectID] = append(ids[f.ProjectID], f.ID)
	}
	for p, g := range gone {
		ids[p] = append(ids[p], g...)
	}
	stale, top := map[string][]string{}, uint64(0)
	for p, list := range ids {
		found, err := s.feedbackVersions(ctx, p, list)
		if err != nil {
			return err
		}
		for id, v := range found {
			stale[p], top = append(stale[p], id), max(top, v)
		}
	}
	version := s.versions.next(top)
	if err := s.insertFeedback(ctx, rows, version); err != nil {
		return err
	}
	for p, list := range stale {
		for _, chunk := range chunks(list) {
			err := s.conn.Exec(ctx, "DELETE FROM feedback WHERE project_id = {project:String} AND id IN {ids:Array(String)} AND version < {version:UInt64}",
				clickhouse.Named("project", p), clickhouse.Named("ids", chunk), clickhouse.Named("version", version))
			if err != nil {
				return wrapErr("delete feedback", err)
			}
		}
	}
	return nil
}

func (s *Store) insertFeedback(ctx context.Context, rows []storage.Feedback, version uint64) error {
	return s.insertBatch(ctx, "feedback", feedbackColumns, len(rows), func(i int) []any {
		f := rows[i]
		var extra *string
		if f.Extra != nil {
			e := string(f.Extra)
			extra = &e
		}
		return []any{f.ProjectID, f.ID, f.WeaveRef, f.FeedbackType, string(f.Payload), f.Creator, f.CreatedAt.UTC(), f.WBUserID,
			f.AnnotationRef, f.RunnableRef, f.CallRef, f.TriggerRef, f.QueueID, extra, version}
	})
}

// feedbackVersions maps the stored ids among ids to their highest version.
func (s *Store) feedbackVersions(ctx context.Context, projectID string, ids []string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, chunk := range chunks(distinctSorted(ids)) {
		err := s.eachRow(ctx, "read feedback ids", `SELECT id, max(version) FROM feedback
			WHERE project_id = {project:String} AND id IN {ids:Array(String)} GROUP BY id`, func(rows driver.Rows) error {
			var id string
			var v uint64
			err := rows.Scan(&id, &v)
			out[id] = v
			return err
		}, clickhouse.Named("project", projectID), clickhouse.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// QueryFeedback implements storage.FeedbackStore.
func (s *Store) QueryFeedback(ctx context.Context, q storage.FeedbackQuery) (storage.FeedbackQueryRes, error) {
	where, err := querylang.Parse(q.Where)
	if err != nil {
		return storage.FeedbackQueryRes{}, err
	}
	tq := tablesql.Query{Scope: []tablesql.Scope{{Column: "project_id", Value: q.ProjectID}},
		Fields: q.Fields, Where: where, SortBy: q.SortBy, Limit: q.Limit, Offset: q.Offset}
	rows, err := s.tableSQLRows(ctx, tablesql.FeedbackTable(), tq)
	if err != nil {
		return storage.FeedbackQueryRes{}, fmt.Errorf("feedback query: %w", err)
	}
	st, err := tablesql.Count(s.dialect, tablesql.FeedbackTable(), tq)
	if err != nil {
		return storage.FeedbackQueryRes{}, fmt.Errorf("feedback count: %w", err)
	}
	var count uint64
	err = s.eachRow(ctx, "feedback count", st.SQL, func(rows driver.Rows) error { return rows.Scan(&count) }, s.named(st.Args)...)
	return storage.FeedbackQueryRes{Result: rows, TotalCount: int64(count)}, err
}

// feedbackOnCall are the fields of a summary.weave.feedback entry.
var feedbackOnCall = []string{"id", "feedback_type", "weave_ref", "payload", "creator", "created_at",
	"wb_user_id", "runnable_ref", "call_ref", "trigger_ref", "annotation_ref"}

// FeedbackForRefs implements storage.FeedbackStore.
func (s *Store) FeedbackForRefs(ctx context.Context, projectID string, refs []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	lists := map[string][]json.RawMessage{}
	for _, chunk := range chunks(distinctSorted(refs)) {
		in := make([]querylang.Expr, len(chunk))
		for i, r := range chunk {
			in[i] = &querylang.Literal{Value: r}
		}
		tq := tablesql.Query{Scope: []tablesql.Scope{{Column: "project_id", Value: projectID}},
			Fields: slices.Clone(feedbackOnCall), Where: &querylang.In{Operand: &querylang.GetField{Path: "weave_ref"}, List: in},
			SortBy: []storage.SortBy{{Field: "created_at", Direction: "asc"}, {Field: "id", Direction: "asc"}}}
		rows, err := s.tableSQLRows(ctx, tablesql.FeedbackTable(), tq)
		if err != nil {
			return nil, fmt.Errorf("feedback of calls: %w", err)
		}
		for _, r := range rows {
			var key struct {
				WeaveRef string `json:"weave_ref"`
			}
			if err := json.Unmarshal(r, &key); err != nil {
				return nil, fmt.Errorf("feedback of calls: %w", err)
			}
			lists[key.WeaveRef] = append(lists[key.WeaveRef], r)
		}
	}
	for ref, list := range lists {
		b, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		out[ref] = b
	}
	return out, nil
}

// tableSQLRows runs a tablesql select and renders each row as JSON.
func (s *Store) tableSQLRows(ctx context.Context, t tablesql.Table, q tablesql.Query) ([]json.RawMessage, error) {
	st, outs, err := tablesql.Select(s.dialect, t, q)
	if err != nil {
		return nil, err
	}
	out := []json.RawMessage{}
	var sc *valueScanner
	vals := make([]any, len(outs))
	err = s.eachRow(ctx, "query "+t.Name, st.SQL, func(rows driver.Rows) error {
		if sc == nil {
			sc = newValueScanner(rows)
		}
		if err := sc.scan(rows, func(i int, v any) { vals[i] = v }); err != nil {
			return err
		}
		obj, err := tablesql.RowJSON(outs, vals)
		out = append(out, obj)
		return err
	}, s.named(st.Args)...)
	return out, err
}
