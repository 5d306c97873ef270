package clickhouse

import (
	"context"
	"iter"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// QueryThreads implements storage.ThreadReader.
func (s *Store) QueryThreads(ctx context.Context, q storage.ThreadsQuery) iter.Seq2[storage.Thread, error] {
	return func(yield func(storage.Thread, error) bool) {
		st, err := sqlgen.ThreadsSelect(s.dialect, q)
		if err != nil {
			yield(storage.Thread{}, err)
			return
		}
		rows, err := s.conn.Query(ctx, st.SQL, s.named(st.Args)...)
		if err != nil {
			yield(storage.Thread{}, wrapErr("query threads", err))
			return
		}
		defer rows.Close()
		sc := newValueScanner(rows)
		for rows.Next() {
			var th storage.Thread
			err := sc.scan(rows, func(i int, v any) { setThreadColumn(&th, sc.names[i], v) })
			if !yield(th, wrapErr("query threads", err)) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(storage.Thread{}, wrapErr("query threads", err))
		}
	}
}

// setThreadColumn stores one value of sqlgen.ThreadColumns; NULL leaves
// the field unset.
func setThreadColumn(th *storage.Thread, name string, v any) {
	if v == nil {
		return
	}
	switch name {
	case "thread_id":
		th.ThreadID = v.(string)
	case "turn_count":
		th.TurnCount = toInt64(v) // count() is UInt64
	case "start_time":
		th.StartTime = v.(time.Time)
	case "last_updated":
		th.LastUpdated = v.(time.Time)
	case "first_turn_id":
		th.FirstTurnID = v.(string)
	case "last_turn_id":
		th.LastTurnID = v.(string)
	case "p50_turn_duration_ms":
		f := v.(float64)
		th.P50TurnDurationMS = &f
	case "p99_turn_duration_ms":
		f := v.(float64)
		th.P99TurnDurationMS = &f
	}
}
