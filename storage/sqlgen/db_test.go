package sqlgen

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// Registers the "duckdb" database/sql driver.
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/weftdev/weft/storage/querylang"
)

// feedbackDDL mirrors the feedback table of the real schema.
const feedbackDDL = `CREATE TABLE IF NOT EXISTS feedback (
	project_id VARCHAR, id VARCHAR, weave_ref VARCHAR, feedback_type VARCHAR, payload JSON,
	creator VARCHAR, created_at TIMESTAMP, wb_user_id VARCHAR, annotation_ref VARCHAR,
	runnable_ref VARCHAR, call_ref VARCHAR, trigger_ref VARCHAR)`

// base is the time every fixture is placed relative to.
var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

func ptrTime(t time.Time) *time.Time { return &t }

// call is one fixture row of the calls table; zero values are NULL except
// where noted.
type call struct {
	project, id, trace, parent, thread, turn, op, display string
	started                                               time.Time
	ended, deleted                                        *time.Time
	attributes, inputs, output, summary, exception        string
	wbUser, wbRun                                         string
	step                                                  *int64
	inputRefs, outputRefs                                 []string
	endOnly                                               bool // has_start = false
}

type feedbackRow struct {
	project, id, ref, typ, payload, runnable string
	created                                  time.Time
}

// openDB creates an in-memory database with the calls table of the
// DuckDB backend's migration and the feedback table.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	names, err := filepath.Glob("../duckdb/migrations/*_calls*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("calls migrations: %v", err)
	}
	var stmts []string
	for _, name := range names { // Glob sorts, as the store applies them
		ddl, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(ddl))
	}
	for _, stmt := range append(stmts, feedbackDDL) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// emptyMarker in a fixture string field stores an empty string, not NULL.
const emptyMarker = "''"

// nullable maps "" to NULL and emptyMarker to an empty string.
func nullable(s string) any {
	switch s {
	case "":
		return nil
	case emptyMarker:
		return ""
	}
	return s
}

func insertCalls(t testing.TB, db *sql.DB, calls []call) {
	t.Helper()
	const q = `INSERT INTO calls (project_id, id, has_start, has_end, trace_id, parent_id, thread_id, turn_id,
		op_name, display_name, started_at, ended_at, attributes, inputs, output, summary, exception,
		wb_user_id, wb_run_id, wb_run_step, input_refs, output_refs, deleted_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	for _, c := range calls {
		project := c.project
		if project == "" {
			project = "e/p"
		}
		var started any = c.started
		if c.endOnly {
			started = nil
		}
		var ended, deleted any
		if c.ended != nil {
			ended = *c.ended
		}
		if c.deleted != nil {
			deleted = *c.deleted
		}
		var step any
		if c.step != nil {
			step = *c.step
		}
		_, err := db.Exec(q, project, c.id, !c.endOnly, c.ended != nil, nullable(c.trace), nullable(c.parent),
			nullable(c.thread), nullable(c.turn), nullable(c.op), nullable(c.display), started, ended,
			nullable(c.attributes), nullable(c.inputs), nullable(c.output), nullable(c.summary), nullable(c.exception),
			nullable(c.wbUser), nullable(c.wbRun), step, refsJSON(t, c.inputRefs), refsJSON(t, c.outputRefs), deleted)
		if err != nil {
			t.Fatalf("insert %s: %v", c.id, err)
		}
	}
	// The DuckDB store writes each call's latency and token total with it
	// (StoredLatencyDialect, StoredTokensDialect).
	for _, stmt := range []string{storedLatencySQL, "UPDATE calls SET total_tokens = " + TotalTokensSQL(DuckDB{}, "calls")} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// storedLatencySQL sets latency_ms as the DuckDB store writes it.
const storedLatencySQL = "UPDATE calls SET latency_ms = epoch_ms(ended_at) - epoch_ms(started_at)"

// refsJSON is a refs list as the DuckDB store keeps it: a JSON array,
// NULL for none.
func refsJSON(t testing.TB, refs []string) any {
	if len(refs) == 0 {
		return nil
	}
	b, err := json.Marshal(refs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func listOrEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func insertFeedback(t testing.TB, db *sql.DB, rows []feedbackRow) {
	t.Helper()
	const q = `INSERT INTO feedback (project_id, id, weave_ref, feedback_type, payload, created_at, runnable_ref)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
	for _, r := range rows {
		if _, err := db.Exec(q, r.project, r.id, r.ref, r.typ, r.payload, r.created, nullable(r.runnable)); err != nil {
			t.Fatalf("insert feedback %s: %v", r.id, err)
		}
	}
}

// queryRows runs st and returns every row as column name -> value.
func queryRows(t testing.TB, db *sql.DB, st Statement) []map[string]any {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), st.SQL, st.Args...)
	if err != nil {
		t.Fatalf("query failed: %v\nSQL: %s\nargs: %v", err, st.SQL, st.Args)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("query failed: %v\nSQL: %s", err, st.SQL)
	}
	return out
}

// where parses an operation as a query document; the callers' operations
// are fixed and valid.
func where(op string) querylang.Expr {
	e, err := parseWhere(op)
	if err != nil {
		panic(err)
	}
	return e
}

// parseWhere parses an operation as a query document, as the query API
// does before it calls storage.
func parseWhere(op string) (querylang.Expr, error) {
	return querylang.Parse(json.RawMessage(`{"$expr":` + op + `}`))
}

// eqq builds {"$eq":[{"$getField":f},{"$literal":lit}]} from raw JSON lit.
func eqq(f, lit string) string {
	return `{"$eq":[{"$getField":"` + strings.ReplaceAll(f, `\`, `\\`) + `"},{"$literal":` + lit + `}]}`
}
