package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"iter"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// QueryThreads implements storage.ThreadReader.
func (s *Store) QueryThreads(ctx context.Context, q storage.ThreadsQuery) iter.Seq2[storage.Thread, error] {
	return func(yield func(storage.Thread, error) bool) {
		st, err := sqlgen.ThreadsSelect(sqlgen.NewDuckDB(), q)
		if err != nil {
			yield(storage.Thread{}, err)
			return
		}
		rows, err := s.calls.guarded(s.db).QueryContext(ctx, st.SQL, st.Args...)
		if err != nil {
			yield(storage.Thread{}, fmt.Errorf("query threads: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			th, err := scanThread(rows)
			if !yield(th, err) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(storage.Thread{}, fmt.Errorf("query threads: %w", err))
		}
	}
}

// scanThread reads one row of sqlgen.ThreadColumns.
func scanThread(rows *sql.Rows) (storage.Thread, error) {
	var (
		th                  storage.Thread
		start, last         sql.NullTime
		firstTurn, lastTurn sql.NullString
		p50, p99            sql.NullFloat64
	)
	if err := rows.Scan(&th.ThreadID, &th.TurnCount, &start, &last, &firstTurn, &lastTurn, &p50, &p99); err != nil {
		return storage.Thread{}, fmt.Errorf("scan thread: %w", err)
	}
	th.StartTime, th.LastUpdated = start.Time.UTC(), last.Time.UTC()
	th.FirstTurnID, th.LastTurnID = firstTurn.String, lastTurn.String
	th.P50TurnDurationMS, th.P99TurnDurationMS = floatPtr(p50), floatPtr(p99)
	return th, nil
}

func floatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}
