package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"

	"github.com/weftdev/weft/storage"
)

// stageColumns are the columns a merged call part is appended with, in
// order. The merge below reads them from the stage table.
var stageColumns = []string{
	"project_id", "id", "has_start", "has_end",
	"trace_id", "parent_id", "thread_id", "turn_id", "op_name", "display_name",
	"started_at", "ended_at",
	"attributes", "inputs", "output", "summary", "otel_dump",
	"exception", "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end",
	"input_refs", "output_refs",
	"usage_models", "usage_model", "usage_requests", "usage_prompt", "usage_completion", "usage_total",
	"usage_cache_read", "usage_cache_create", "latency_ms",
}

var (
	startColumns = []string{"trace_id", "parent_id", "thread_id", "turn_id", "op_name", "display_name",
		"started_at", "attributes", "inputs", "otel_dump", "wb_user_id", "wb_run_id", "wb_run_step", "input_refs"}
	endColumns = []string{"ended_at", "exception", "output", "summary", "wb_run_step_end", "output_refs",
		"usage_models", "usage_model", "usage_requests", "usage_prompt", "usage_completion", "usage_total",
		"usage_cache_read", "usage_cache_create"}
)

// mergeSQL merges appended parts into calls: a side present in the new
// part replaces that side of the stored row; the other side is kept. Rows
// that do not exist yet are inserted.
func mergeSQL() string {
	// side is column c of the merged row: the new part's when cond holds,
	// else the stored row's.
	side := func(c, cond string) string {
		return fmt.Sprintf("CASE WHEN %s THEN a.%s ELSE calls.%s END", cond, c, c)
	}
	var set []string
	for _, c := range startColumns {
		cond := "a.has_start"
		if c == "display_name" { // a rename outlives a start that comes after it
			cond += " AND NOT coalesce(calls.renamed, false)"
		}
		if c == "otel_dump" {
			set = append(set, "otel_dump = CASE WHEN a.has_start THEN a.otel_dump WHEN "+keepsOutputSQL+" ELSE calls.otel_dump END")
			continue
		}
		set = append(set, c+" = "+side(c, cond))
	}
	for _, c := range endColumns {
		set = append(set, c+" = "+side(c, "a.has_end"))
	}
	// The latency of the merged row, from the sides it now holds, as
	// callLatency computes it for a part inserted whole.
	set = append(set, "latency_ms = epoch_ms("+side("ended_at", "a.has_end")+") - epoch_ms("+side("started_at", "a.has_start")+")")
	set = append(set, "has_start = calls.has_start OR a.has_start", "has_end = calls.has_end OR a.has_end")
	vals := make([]string, len(stageColumns))
	for i, c := range stageColumns {
		vals[i] = "a." + c
	}
	return "MERGE INTO calls USING " + stageTable + " AS a ON calls.project_id = a.project_id AND calls.id = a.id " +
		"WHEN MATCHED THEN UPDATE SET " + strings.Join(set, ", ") +
		" WHEN NOT MATCHED THEN INSERT (" + strings.Join(stageColumns, ", ") + ") VALUES (" + strings.Join(vals, ", ") + ")"
}

// keepsOutputSQL is the CASE branch by which an end part that replaces
// the output of a row whose dump references it keeps that output inside
// the dump ("o=" form, see dumprefs.go).
const keepsOutputSQL = "a.has_end AND starts_with(calls.otel_dump, '" + refPrefix + "') AND contains(calls.otel_dump, chr(1) || 'o') " +
	"THEN '" + embeddedOutputPrefix + "' || strlen(coalesce(calls.output, '')) || ':' || coalesce(calls.output, '') || calls.otel_dump"

// stageTable holds the parts of known calls that one write merges into
// calls: a temporary table of the writing connection, filled by the
// appender and emptied after the merge, inside the write's transaction.
// DuckDB's query appender does both in one call, but under a buffer pool
// that evicts, its flush crashed the process (see ADR 0020 and
// TestStoreUnderConcurrentWritesReadsAndCheckpoints).
const stageTable = "temp.main.call_parts"

// stageTableSQL creates stageTable on a connection once, with the calls
// table's types for stageColumns.
var stageTableSQL = "CREATE TEMP TABLE IF NOT EXISTS call_parts AS SELECT " + strings.Join(stageColumns, ", ") + " FROM calls LIMIT 0"

// WriteCallOps implements storage.CallWriter: all ops in one transaction.
func (s *Store) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var results []storage.CallOpResult
	err := s.inCallsTx(ctx, func(conn *sql.Conn) (err error) {
		results, err = s.applyOps(ctx, conn, ops)
		return err
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// inCallsTx runs f in a write transaction of calls on a connection of its
// own and commits it (commitCalls), or rolls it back when f fails. The
// caller holds writeMu.
func (s *Store) inCallsTx(ctx context.Context, f func(conn *sql.Conn) error) error {
	if err := s.calls.err(); err != nil {
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("duckdb conn: %w: %w", storage.ErrUnavailable, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		rollback(conn) // a BEGIN stopped part way can leave an aborted transaction
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(conn); err != nil {
		rollback(conn)
		return err
	}
	return s.commitCalls(ctx, conn)
}

// commitCalls commits conn's write transaction of calls
// (callsGuard.commit). The COMMIT is not stopped with ctx: DuckDB
// interrupted part way through a commit is a commit that failed. If it
// fails, the store fails: it refuses every read and write of calls, and
// Failed reports why, so that the process stops and the next start
// replays the write-ahead log into a database opened afresh.
func (s *Store) commitCalls(ctx context.Context, conn *sql.Conn) error {
	err := s.calls.commit(func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
		return err
	})
	if err == nil {
		return nil
	}
	rollback(conn)
	s.watch.report(fmt.Errorf("the embedded database must be opened again: %w", err))
	return fmt.Errorf("commit calls: %w", err)
}

// applyOps writes ops in order. The caller has merged the parts of each
// call within a run (storage.CallWriter's contract): a statement cannot
// touch one row twice.
func (s *Store) applyOps(ctx context.Context, conn *sql.Conn, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	results := make([]storage.CallOpResult, len(ops))
	for start := 0; start < len(ops); {
		end := start
		for end < len(ops) && ops[end].Part != nil {
			end++
		}
		if end > start {
			if err := s.appendParts(conn, ops[start:end]); err != nil {
				return nil, err
			}
			start = end
			continue
		}
		var err error
		switch op := ops[start]; {
		case op.Update != nil:
			err = s.updateCall(ctx, conn, op.Update)
		case op.Delete != nil:
			results[start].NumDeleted, err = s.deleteCalls(ctx, conn, op.Delete)
		}
		if err != nil {
			return nil, err
		}
		start++
	}
	return results, nil
}

// appendParts writes a run of merged parts: calls the id filter has never
// seen go straight in through the appender; the rest are merged with
// their stored rows.
func (s *Store) appendParts(conn *sql.Conn, ops []storage.CallOp) error {
	var fresh, known []storage.CallOp
	for _, op := range ops {
		if c := &op.Part.Call; op.Part.Kind.HasStart() {
			s.located.record(c.ProjectID, c.ID, c.TraceID, c.StartedAt)
		}
		if s.ids.mayContain(op.Part.Call.ProjectID, op.Part.Call.ID) {
			known = append(known, op)
		} else {
			fresh = append(fresh, op)
		}
	}
	err := conn.Raw(func(dc any) error {
		if err := s.insertFresh(dc.(driver.Conn), fresh); err != nil {
			return err
		}
		return s.mergeKnown(dc.(driver.Conn), known)
	})
	if err != nil {
		return err
	}
	for _, op := range fresh {
		s.ids.add(op.Part.Call.ProjectID, op.Part.Call.ID)
	}
	return nil
}

func (s *Store) insertFresh(dc driver.Conn, ops []storage.CallOp) error {
	if len(ops) == 0 {
		return nil
	}
	app, err := duckdbdriver.NewAppenderWithColumns(dc, callsCatalog, "main", "calls", stageColumns)
	if err != nil {
		return fmt.Errorf("calls appender: %w", err)
	}
	return s.appendAll(app, ops, "insert calls")
}

func (s *Store) mergeKnown(dc driver.Conn, ops []storage.CallOp) error {
	if len(ops) == 0 {
		return nil
	}
	ex, ok := dc.(driver.ExecerContext)
	if !ok {
		return errors.New("merge calls: the driver connection runs no statements")
	}
	exec := func(stmt string) error {
		_, err := ex.ExecContext(context.Background(), stmt, nil)
		return err
	}
	if err := exec(stageTableSQL); err != nil {
		return fmt.Errorf("calls stage table: %w", err)
	}
	app, err := duckdbdriver.NewAppenderWithColumns(dc, "temp", "main", "call_parts", stageColumns)
	if err != nil {
		return fmt.Errorf("calls stage appender: %w", err)
	}
	if err := s.appendAll(app, ops, "stage calls"); err != nil {
		return err
	}
	if err := exec(mergeSQL()); err != nil {
		return fmt.Errorf("merge calls: %w", err)
	}
	if err := exec("DELETE FROM " + stageTable); err != nil {
		return fmt.Errorf("empty the calls stage table: %w", err)
	}
	return nil
}

func (s *Store) appendAll(app *duckdbdriver.Appender, ops []storage.CallOp, what string) error {
	dumps := s.dumps.packAll(ops)
	for i, op := range ops {
		if err := app.AppendRow(s.partRow(op.Part, dumps[i])...); err != nil {
			_ = app.Close()
			return fmt.Errorf("%s: call %s: %w", what, op.Part.Call.ID, err)
		}
	}
	if err := app.Close(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// partRow is a part's row in stageColumns order, its raw span already
// packed.
func (s *Store) partRow(p *storage.CallPart, dump any) []driver.Value {
	c := &p.Call
	u := usageColumns(c.Summary)
	return []driver.Value{
		c.ProjectID, c.ID, p.Kind.HasStart(), p.Kind.HasEnd(),
		nullStr(c.TraceID), nullStr(c.ParentID), nullStr(c.ThreadID), nullStr(c.TurnID),
		nullStr(c.OpName), nullStr(c.DisplayName),
		nullTime(c.StartedAt), nullTimePtr(c.EndedAt),
		nullJSON(c.Attributes), nullJSON(c.Inputs), nullJSON(c.Output), nullJSON(c.Summary), dump,
		nullStrPtr(c.Exception), nullStr(c.WBUserID), nullStr(c.WBRunID), nullInt(c.WBRunStep), nullInt(c.WBRunStepEnd),
		refsText(c.InputRefs), refsText(c.OutputRefs),
		u.models, u.model, u.Requests, u.Prompt, u.Completion, u.Total, u.CacheRead, u.CacheCreate,
		callLatency(c.StartedAt, c.EndedAt),
	}
}

// callLatency is the latency_ms column of a row holding start and end
// (migrations/0012_calls_latency.sql): what epoch_ms(ended_at) -
// epoch_ms(started_at) reads once DuckDB has stored both at microsecond
// precision; NULL when either is missing.
func callLatency(started time.Time, ended *time.Time) driver.Value {
	if started.IsZero() || ended == nil { // nullTime and nullTimePtr store these as NULL
		return nil
	}
	return epochMillis(*ended) - epochMillis(started)
}

// epochMillis is DuckDB's epoch_ms of t stored as a TIMESTAMP: the
// microseconds since the epoch divided by 1,000, rounded toward zero.
func epochMillis(t time.Time) int64 { return t.UnixMicro() / 1000 }

// typedUsage is a summary's usage as the usage_* columns hold it
// (migrations/0011_calls_usage.sql).
type typedUsage struct {
	summaryUsage
	models, model driver.Value
}

func usageColumns(summary json.RawMessage) typedUsage {
	u := usageOfSummary(summary)
	switch {
	case u.Typed():
		return typedUsage{summaryUsage: u, models: int32(1), model: u.Model}
	case u.Models == 0:
		return typedUsage{models: int32(0)}
	}
	return typedUsage{} // NULL: readers parse the summary
}

func nullStr(s string) driver.Value {
	if s == "" {
		return nil
	}
	return s
}

func nullStrPtr(s *string) driver.Value {
	if s == nil {
		return nil
	}
	return *s
}

func nullTime(t time.Time) driver.Value {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nullTimePtr(t *time.Time) driver.Value {
	if t == nil {
		return nil
	}
	return t.UTC()
}

func nullJSON(b []byte) driver.Value {
	if b == nil {
		return nil
	}
	return string(b)
}

func nullInt(i *int64) driver.Value {
	if i == nil {
		return nil
	}
	return *i
}

// refsText is how the calls table keeps a list of refs: a JSON array,
// NULL for none (see migrations/0001_calls.sql).
func refsText(refs []string) driver.Value {
	if len(refs) == 0 {
		return nil
	}
	b, err := json.Marshal(refs)
	if err != nil { // a []string always marshals
		panic("BUG: refs: " + err.Error())
	}
	return string(b)
}
