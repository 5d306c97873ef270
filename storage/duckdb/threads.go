package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"iter"

	"github.com/weftdev/weft/storage/sqlgen"
)

// QueryThreads runs a /threads/stream_query. Each row holds the values of
// sqlgen.ThreadColumns in that order, typed so any backend can produce
// them: thread_id string, turn_count int64, start_time and last_updated
// time.Time (UTC), first_turn_id and last_turn_id string, and the p50 and
// p99 turn durations float64 milliseconds; a SQL NULL is nil.
func (s *Store) QueryThreads(ctx context.Context, q sqlgen.ThreadsQuery) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		st, err := sqlgen.ThreadsSelect(sqlgen.NewDuckDB(), q)
		if err != nil {
			yield(nil, err)
			return
		}
		rows, err := s.db.QueryContext(ctx, st.SQL, st.Args...)
		if err != nil {
			yield(nil, fmt.Errorf("query threads: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			row, err := scanThread(rows)
			if !yield(row, err) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(nil, fmt.Errorf("query threads: %w", err))
		}
	}
}

func scanThread(rows *sql.Rows) ([]any, error) {
	var (
		id                  string
		turns               int64
		start, last         sql.NullTime
		firstTurn, lastTurn sql.NullString
		p50, p99            sql.NullFloat64
	)
	if err := rows.Scan(&id, &turns, &start, &last, &firstTurn, &lastTurn, &p50, &p99); err != nil {
		return nil, fmt.Errorf("scan thread: %w", err)
	}
	return []any{id, turns, nullable(timePtr(start)), nullable(timePtr(last)),
		nullable(strPtr(firstTurn)), nullable(strPtr(lastTurn)), floatOrNil(p50), floatOrNil(p99)}, nil
}

// nullable turns a nil pointer into an untyped nil and dereferences the rest.
func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func floatOrNil(v sql.NullFloat64) any {
	if !v.Valid {
		return nil
	}
	return v.Float64
}
