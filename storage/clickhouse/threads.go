package clickhouse

import (
	"context"
	"iter"

	"github.com/weftdev/weft/storage/sqlgen"
)

// QueryThreads runs a /threads/stream_query. Each row holds the values of
// sqlgen.ThreadColumns in that order, typed as the DuckDB backend types
// them: thread_id string, turn_count int64, start_time and last_updated
// time.Time (UTC), first_turn_id and last_turn_id string, and the p50 and
// p99 turn durations float64 milliseconds; a SQL NULL is nil.
func (s *Store) QueryThreads(ctx context.Context, q sqlgen.ThreadsQuery) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		st, err := sqlgen.ThreadsSelect(s.dialect, q)
		if err != nil {
			yield(nil, err)
			return
		}
		rows, err := s.conn.Query(ctx, st.SQL, s.named(st.Args)...)
		if err != nil {
			yield(nil, wrapErr("query threads", err))
			return
		}
		defer rows.Close()
		sc := newValueScanner(rows)
		for rows.Next() {
			row := make([]any, len(sc.names))
			err := sc.scan(rows, func(i int, v any) {
				if sc.names[i] == "turn_count" && v != nil {
					v = toInt64(v) // count() is UInt64
				}
				row[i] = v
			})
			if !yield(row, wrapErr("query threads", err)) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(nil, wrapErr("query threads", err))
		}
	}
}
