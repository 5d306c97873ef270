package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// QueryCalls implements storage.CallReader.
func (s *Store) QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	return func(yield func(storage.StoredCall, error) bool) {
		st, err := sqlgen.CallsSelect(s.dialect, q)
		if err != nil {
			yield(storage.StoredCall{}, err)
			return
		}
		rows, err := s.conn.Query(ctx, st.SQL, s.named(st.Args)...)
		if err != nil {
			yield(storage.StoredCall{}, wrapErr("query calls", err))
			return
		}
		defer rows.Close()
		sc := newValueScanner(rows)
		setters := make([]func(*storage.StoredCall, any), len(sc.names))
		for i, name := range sc.names {
			setters[i] = callSetter(name)
		}
		for rows.Next() {
			var c storage.StoredCall
			err := sc.scan(rows, func(i int, v any) {
				if v != nil && setters[i] != nil {
					setters[i](&c, v)
				}
			})
			if !yield(c, wrapErr("query calls", err)) || err != nil {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(storage.StoredCall{}, wrapErr("query calls", err))
		}
	}
}

// CountCalls implements storage.CallReader.
func (s *Store) CountCalls(ctx context.Context, q storage.CallsQuery, limit int64) (storage.CallsStats, error) {
	st, err := sqlgen.CallsCount(s.dialect, q, limit)
	if err != nil {
		return storage.CallsStats{}, err
	}
	rows, err := s.conn.Query(ctx, st.SQL, s.named(st.Args)...)
	if err != nil {
		return storage.CallsStats{}, wrapErr("count calls", err)
	}
	defer rows.Close()
	var out storage.CallsStats
	if !rows.Next() {
		return out, wrapErr("count calls", rows.Err())
	}
	var total *int64
	sc := newValueScanner(rows)
	err = sc.scan(rows, func(i int, v any) {
		switch sc.names[i] {
		case "count":
			out.Count = toInt64(v)
		case "total_storage_size_bytes":
			if v != nil {
				n := toInt64(v)
				total = &n
			}
		}
	})
	if err != nil {
		return out, wrapErr("count calls", err)
	}
	if q.IncludeTotalStorageSize {
		if total == nil {
			total = new(int64)
		}
		out.TotalStorageSizeBytes = total
	}
	return out, nil
}

// valueScanner scans rows whose column types depend on the statement (a
// column left out by a projection is a typeless NULL) into plain Go
// values: pointers dereferenced, NULL as nil, times in UTC.
type valueScanner struct {
	names []string
	dest  []any
}

func newValueScanner(rows driver.Rows) *valueScanner {
	cols := rows.ColumnTypes()
	sc := &valueScanner{names: make([]string, len(cols)), dest: make([]any, len(cols))}
	for i, c := range cols {
		sc.names[i] = c.Name()
		sc.dest[i] = reflect.New(c.ScanType()).Interface()
	}
	return sc
}

// scan reads the current row and calls set with each column's index and
// value.
func (sc *valueScanner) scan(rows driver.Rows, set func(i int, v any)) error {
	if err := rows.Scan(sc.dest...); err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	for i := range sc.names {
		set(i, plainValue(reflect.ValueOf(sc.dest[i]).Elem()))
	}
	return nil
}

func plainValue(v reflect.Value) any {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if t, ok := v.Interface().(time.Time); ok {
		return t.UTC()
	}
	return v.Interface()
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case uint64:
		return int64(n)
	}
	return reflect.ValueOf(v).Convert(reflect.TypeFor[int64]()).Int()
}

// callSetter returns how a column of sqlgen.CallColumns lands in a call,
// nil for columns calls do not carry. NULL leaves the field unset, and so
// does the empty string in a sentinel column.
func callSetter(name string) func(c *storage.StoredCall, v any) {
	switch name {
	case "project_id", "id", "trace_id", "parent_id", "thread_id", "turn_id", "op_name",
		"display_name", "wb_user_id", "wb_run_id":
		return func(c *storage.StoredCall, v any) { *stringField(c, name) = v.(string) }
	case "attributes", "inputs", "output", "summary", "otel_dump":
		return func(c *storage.StoredCall, v any) { *jsonField(c, name) = jsonOrNil(v.(string)) }
	case "started_at":
		return func(c *storage.StoredCall, v any) { c.StartedAt = v.(time.Time) }
	case "ended_at":
		return func(c *storage.StoredCall, v any) { t := v.(time.Time); c.EndedAt = &t }
	case "deleted_at":
		return func(c *storage.StoredCall, v any) { t := v.(time.Time); c.DeletedAt = &t }
	case "exception":
		return func(c *storage.StoredCall, v any) { e := v.(string); c.Exception = &e }
	case "wb_run_step", "wb_run_step_end", "storage_size_bytes", "total_storage_size_bytes":
		return func(c *storage.StoredCall, v any) { n := toInt64(v); *intField(c, name) = &n }
	}
	return nil
}

func stringField(c *storage.StoredCall, name string) *string {
	switch name {
	case "project_id":
		return &c.ProjectID
	case "id":
		return &c.ID
	case "trace_id":
		return &c.TraceID
	case "parent_id":
		return &c.ParentID
	case "thread_id":
		return &c.ThreadID
	case "turn_id":
		return &c.TurnID
	case "op_name":
		return &c.OpName
	case "display_name":
		return &c.DisplayName
	case "wb_user_id":
		return &c.WBUserID
	}
	return &c.WBRunID
}

func jsonField(c *storage.StoredCall, name string) *json.RawMessage {
	switch name {
	case "attributes":
		return &c.Attributes
	case "inputs":
		return &c.Inputs
	case "output":
		return &c.Output
	case "summary":
		return &c.Summary
	}
	return &c.OtelDump
}

func intField(c *storage.StoredCall, name string) **int64 {
	switch name {
	case "wb_run_step":
		return &c.WBRunStep
	case "wb_run_step_end":
		return &c.WBRunStepEnd
	case "storage_size_bytes":
		return &c.StorageSizeBytes
	}
	return &c.TotalStorageSizeBytes
}
