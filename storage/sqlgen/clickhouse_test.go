package sqlgen

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/internal/chfront"
)

// The ClickHouse tests run the statements of this package on the real
// engine, over the real calls schema of the ClickHouse backend, with the
// fixtures and expected answers of the DuckDB tests.
func TestMain(m *testing.M) { os.Exit(chfront.RunTests(m)) }

// chFeedbackDDL has the feedback columns the generator reads, typed as
// the backend's feedback table types them.
const chFeedbackDDL = `CREATE TABLE feedback (
	project_id String, id String, weave_ref String, feedback_type LowCardinality(String), payload String,
	created_at DateTime64(6, 'UTC'), runnable_ref Nullable(String), trigger_ref Nullable(String)
) ENGINE = MergeTree ORDER BY (project_id, weave_ref, id)`

// openCH creates a database with the backend's calls table and the
// feedback table, holding calls and feedback.
func openCH(t testing.TB, calls []call, feedback []feedbackRow) driver.Conn {
	t.Helper()
	srv := chfront.StartForTest(t)
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{srv.Addr()}, Protocol: clickhouse.HTTP,
		Auth: clickhouse.Auth{Database: chfront.NewTestDatabase(t, srv)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ddl, err := os.ReadFile("../clickhouse/migrations/0001_calls.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{string(ddl), chFeedbackDDL} {
		if err := conn.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
	insertCHCalls(t, conn, calls)
	insertCHFeedback(t, conn, feedback)
	return conn
}

func chFixtureDB(t testing.TB) driver.Conn { return openCH(t, callFixtures(), feedbackFixtures()) }

// sentinel maps a fixture string to the stored form: NULL and the empty
// marker both become the empty string.
func sentinel(s string) string {
	if s == emptyMarker {
		return ""
	}
	return s
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	s = sentinel(s)
	return &s
}

func insertCHCalls(t testing.TB, conn driver.Conn, calls []call) {
	t.Helper()
	ctx := context.Background()
	b, err := conn.PrepareBatch(ctx, `INSERT INTO calls (project_id, id, version, anchor_at, has_start, has_end,
		trace_id, parent_id, thread_id, turn_id, op_name, display_name, started_at, ended_at, attributes, inputs,
		output, summary, exception, wb_user_id, wb_run_id, wb_run_step, input_refs, output_refs, deleted_at)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		project := cmp(c.project, "e/p")
		started, anchor := c.started, c.started
		if c.endOnly {
			started, anchor = time.Unix(0, 0).UTC(), base
		}
		err := b.Append(project, c.id, uint64(1), anchor, !c.endOnly, c.ended != nil,
			sentinel(c.trace), sentinel(c.parent), sentinel(c.thread), sentinel(c.turn), sentinel(c.op), sentinel(c.display),
			started, c.ended, sentinel(c.attributes), sentinel(c.inputs), sentinel(c.output), sentinel(c.summary),
			optString(c.exception), sentinel(c.wbUser), sentinel(c.wbRun), c.step,
			listOrEmpty(c.inputRefs), listOrEmpty(c.outputRefs), c.deleted)
		if err != nil {
			t.Fatalf("append %s: %v", c.id, err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatalf("insert calls: %v", err)
	}
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func insertCHFeedback(t testing.TB, conn driver.Conn, rows []feedbackRow) {
	t.Helper()
	if len(rows) == 0 {
		return
	}
	b, err := conn.PrepareBatch(context.Background(),
		"INSERT INTO feedback (project_id, id, weave_ref, feedback_type, payload, created_at, runnable_ref)")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := b.Append(r.project, r.id, r.ref, r.typ, r.payload, r.created, optString(r.runnable)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatalf("insert feedback: %v", err)
	}
}

// chArgs binds a statement's arguments as the ClickHouse backend does.
func chArgs(args []any) []any {
	d := NewClickHouse()
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = clickhouse.Named(d.ParamName(i+1), d.ParamValue(a))
	}
	return out
}

// sentinelColumns read back as NULL when they hold the empty string.
var sentinelColumns = []string{"trace_id", "parent_id", "thread_id", "turn_id", "op_name", "display_name",
	"wb_user_id", "wb_run_id", "attributes", "inputs", "output", "summary", "otel_dump"}

// chRows runs st and returns every row as column name -> value, with the
// values a DuckDB row would hold: pointers dereferenced, unsigned counts
// as int64, sentinels as nil.
func chRows(t testing.TB, conn driver.Conn, st Statement) []map[string]any {
	t.Helper()
	rows, err := conn.Query(context.Background(), st.SQL, chArgs(st.Args)...)
	if err != nil {
		t.Fatalf("query failed: %v\nSQL: %s\nargs: %v", err, st.SQL, st.Args)
	}
	defer rows.Close()
	cols := rows.ColumnTypes()
	var out []map[string]any
	for rows.Next() {
		dest := make([]any, len(cols))
		for i, c := range cols {
			dest[i] = reflect.New(c.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatalf("scan: %v\nSQL: %s", err, st.SQL)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c.Name()] = duckLike(c.Name(), reflect.ValueOf(dest[i]).Elem())
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("query failed: %v\nSQL: %s", err, st.SQL)
	}
	return out
}

func duckLike(col string, v reflect.Value) any {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case uint64:
		return int64(x)
	case time.Time:
		return x.UTC()
	case string:
		if x == "" && slices.Contains(sentinelColumns, col) {
			return nil
		}
		return x
	}
	return v.Interface()
}

func TestClickHouseParams(t *testing.T) {
	d := NewClickHouse()
	if got := d.Param(3, TypeTime); got != "{p3:DateTime64(6, 'UTC')}" {
		t.Errorf("Param = %s", got)
	}
	tests := []struct{ in, want time.Time }{
		{time.Date(2024, 1, 1, 0, 0, 0, 123456789, time.FixedZone("x", 3600)), time.Date(2023, 12, 31, 23, 0, 0, 123456000, time.UTC)},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2299, 12, 31, 23, 59, 59, 999999000, time.UTC)},
	}
	for _, tt := range tests {
		if got := d.ParamValue(tt.in).(time.Time); !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParamValue(%v) = %v; want %v", tt.in, got, tt.want)
		}
	}
	if got := d.ParamValue("x"); got != "x" {
		t.Errorf("ParamValue(x) = %v", got)
	}
	if !strings.Contains(d.JSONPath(nil), "[]") {
		t.Errorf("empty path = %q", d.JSONPath(nil))
	}
}
