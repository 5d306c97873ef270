package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.FeedbackStore = (*Store)(nil)

// CreateFeedback implements storage.FeedbackStore.
func (s *Store) CreateFeedback(ctx context.Context, rows []storage.Feedback) error {
	if len(rows) == 0 {
		return nil
	}
	projects := make([]string, len(rows))
	for i, f := range rows {
		if err := storekit.CheckFeedback(f); err != nil {
			return err
		}
		projects[i] = f.ProjectID
	}
	unlock := s.projects.lock(projects)
	defer unlock()
	return s.putFeedback(ctx, rows, nil)
}

// ReplaceFeedback implements storage.FeedbackStore.
func (s *Store) ReplaceFeedback(ctx context.Context, projectID, oldID string, row storage.Feedback) error {
	if err := storekit.CheckReplacement(projectID, row); err != nil {
		return err
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
	return s.insertBatch(ctx, "feedback", storekit.FeedbackColumns+", version", len(rows), func(i int) []any {
		return append(storekit.FeedbackValues(rows[i]), version)
	})
}

// feedbackVersions maps the stored ids among ids to their highest version.
func (s *Store) feedbackVersions(ctx context.Context, projectID string, ids []string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, chunk := range chunks(storekit.DistinctSorted(ids)) {
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
	return storekit.QueryFeedback(ctx, tableSQL{s}, q)
}

// FeedbackForRefs implements storage.FeedbackStore, a query per chunk of
// refs.
func (s *Store) FeedbackForRefs(ctx context.Context, projectID string, refs []string) (map[string]json.RawMessage, error) {
	return storekit.FeedbackForRefs(ctx, tableSQL{s}, projectID, chunks(storekit.DistinctSorted(refs)))
}

// tableSQL runs sqlgen table queries in the store's dialect.
type tableSQL struct{ s *Store }

// Rows implements storekit.TableSQL.
func (t tableSQL) Rows(ctx context.Context, tbl sqlgen.Table, q sqlgen.TableQuery) ([]json.RawMessage, error) {
	return t.s.tableSQLRows(ctx, tbl, q)
}

// Count implements storekit.TableSQL.
func (t tableSQL) Count(ctx context.Context, tbl sqlgen.Table, q sqlgen.TableQuery) (int64, error) {
	st, err := sqlgen.TableCount(t.s.dialect, tbl, q)
	if err != nil {
		return 0, err
	}
	var count uint64
	err = t.s.eachRow(ctx, tbl.Name+" count", st.SQL, func(rows driver.Rows) error { return rows.Scan(&count) }, t.s.named(st.Args)...)
	return int64(count), err
}

// tableSQLRows runs a sqlgen table select and renders each row as JSON.
func (s *Store) tableSQLRows(ctx context.Context, t sqlgen.Table, q sqlgen.TableQuery) ([]json.RawMessage, error) {
	st, outs, err := sqlgen.TableSelect(s.dialect, t, q)
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
		obj, err := sqlgen.TableRowJSON(outs, vals)
		out = append(out, obj)
		return err
	}, s.named(st.Args)...)
	return out, err
}
