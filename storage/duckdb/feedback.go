package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.FeedbackStore = (*Store)(nil)

const feedbackInsert = `INSERT OR REPLACE INTO feedback (` + storekit.FeedbackColumns + `)`

// CreateFeedback implements storage.FeedbackStore.
func (s *Store) CreateFeedback(ctx context.Context, rows []storage.Feedback) error {
	if len(rows) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error { return insertFeedback(ctx, tx, rows) })
}

// insertFeedback stores rows; of rows with the same id (a client may send
// its own ids) the last wins, as one by one they would, since one
// statement may not replace a row twice.
func insertFeedback(ctx context.Context, tx *sql.Tx, rows []storage.Feedback) error {
	last := make(map[string]int, len(rows))
	for i, f := range rows {
		if err := storekit.CheckFeedback(f); err != nil {
			return err
		}
		last[f.ProjectID+"\x00"+f.ID] = i
	}
	values := make([][]any, 0, len(rows))
	for i, f := range rows {
		if last[f.ProjectID+"\x00"+f.ID] == i {
			values = append(values, storekit.FeedbackValues(f))
		}
	}
	if err := insertValues(ctx, tx, feedbackInsert, "", values); err != nil {
		return fmt.Errorf("insert feedback: %w", err)
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
	if err := storekit.CheckReplacement(projectID, row); err != nil {
		return err
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
	return storekit.QueryFeedback(ctx, tableSQL{s}, q)
}

// FeedbackForRefs implements storage.FeedbackStore, in one query.
func (s *Store) FeedbackForRefs(ctx context.Context, projectID string, refs []string) (map[string]json.RawMessage, error) {
	var chunks [][]string
	if len(refs) > 0 {
		chunks = [][]string{refs}
	}
	return storekit.FeedbackForRefs(ctx, tableSQL{s}, projectID, chunks)
}

// tableSQL runs sqlgen table queries in DuckDB's dialect.
type tableSQL struct{ s *Store }

// Rows implements storekit.TableSQL.
func (t tableSQL) Rows(ctx context.Context, tbl sqlgen.Table, q sqlgen.TableQuery) ([]json.RawMessage, error) {
	return t.s.tableRows(ctx, tbl, q)
}

// Count implements storekit.TableSQL.
func (t tableSQL) Count(ctx context.Context, tbl sqlgen.Table, q sqlgen.TableQuery) (int64, error) {
	return t.s.tableCount(ctx, tbl, q)
}

// tableRows runs a sqlgen table select and renders each row as JSON.
func (s *Store) tableRows(ctx context.Context, t sqlgen.Table, q sqlgen.TableQuery) ([]json.RawMessage, error) {
	st, outs, err := sqlgen.TableSelect(sqlgen.NewDuckDB(), t, q)
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
		obj, err := sqlgen.TableRowJSON(outs, vals)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, rows.Err()
}

func (s *Store) tableCount(ctx context.Context, t sqlgen.Table, q sqlgen.TableQuery) (int64, error) {
	st, err := sqlgen.TableCount(sqlgen.NewDuckDB(), t, q)
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
