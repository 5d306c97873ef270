package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// stageFields are the call fields a part is appended with: all but
// deleted_at, which soft deletes set.
var stageFields = storage.CallFieldsOf(storage.SideKey, storage.SideStart, storage.SideEnd)

// derivedColumn is a column computed from a part at write time, beside
// its fields: from its end (the typed usage, migrations/0011, and the
// token total, 0014), or from both sides (latency_ms, 0012, which the
// merge sets apart, sideSet).
type derivedColumn struct {
	name  string
	end   bool // an end part sets it
	value func(p *storage.CallPart, u partUsage) driver.Value
}

var derivedColumns = []derivedColumn{
	{"usage_models", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.models }},
	{"usage_model", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.model }},
	{"usage_requests", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.Requests }},
	{"usage_prompt", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.Prompt }},
	{"usage_completion", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.Completion }},
	{"usage_total", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.Total }},
	{"usage_cache_read", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.CacheRead }},
	{"usage_cache_create", true, func(_ *storage.CallPart, u partUsage) driver.Value { return u.CacheCreate }},
	{"total_tokens", true, func(p *storage.CallPart, u partUsage) driver.Value {
		return callTokens(p, u.typedUsage, u.parsedTokens)
	}},
	{"latency_ms", false, func(p *storage.CallPart, _ partUsage) driver.Value {
		return callLatency(p.Call.StartedAt, p.Call.EndedAt)
	}},
}

// derivedNames are the names of the derived columns an end sets (end)
// or of all of them.
func derivedNames(endOnly bool) []string {
	var names []string
	for _, d := range derivedColumns {
		if d.end || !endOnly {
			names = append(names, d.name)
		}
	}
	return names
}

// stageColumns are the columns a call part is appended with, in partRow
// order. The merge below reads them from the stage table.
var stageColumns = slices.Concat([]string{"has_start", "has_end"}, storage.CallColumns(storage.SideKey, storage.SideStart, storage.SideEnd),
	derivedNames(false))

// startColumns and endColumns are the columns each side of a part sets.
var (
	startColumns = storage.CallColumns(storage.SideStart)
	endColumns   = slices.Concat(storage.CallColumns(storage.SideEnd), derivedNames(true))
)

// dumpColumn holds the raw OTel span, packed (dump.go).
const dumpColumn = "otel_dump"

// A merge of parts into stored calls runs as a few statements over
// stageTable rather than one MERGE: DuckDB joined a MERGE's parts to the
// calls table by scanning every row of the project with every column the
// statement names, so storing 30 ends decompressed the whole table's
// inputs and raw spans (0.8 s on a 540k-call store; a restarted center
// replaying its log stored a few records a second). Instead:
//
//  1. matchSQL finds the row id of each part's stored row, reading only
//     the key columns, and only the blocks whose start times can hold
//     them when the locator can say (callLocator.mergeWithin);
//  2. insertUnmatchedSQL inserts the parts that have no row;
//  3. one UPDATE per kind of part present sets that part's side of its
//     row by row id, so an end neither reads nor rewrites the call's
//     inputs and raw span.

// sideSet renders the SET list of a part that carries the given sides,
// into the row with row id a._rid.
func sideSet(start, end bool) string {
	var set []string
	if start {
		for _, c := range startColumns {
			switch c {
			case "display_name": // a rename outlives a start that comes after it
				set = append(set, "display_name = CASE WHEN coalesce(calls.renamed, false) THEN calls.display_name ELSE a.display_name END")
			default:
				set = append(set, c+" = a."+c)
			}
		}
		set = append(set, "has_start = true")
	}
	if end {
		for _, c := range endColumns {
			set = append(set, c+" = a."+c)
		}
		set = append(set, "has_end = true")
	}
	// The latency of the merged row, from the sides it then holds, as
	// callLatency computes it for a part inserted whole.
	switch {
	case start && end:
		set = append(set, "latency_ms = a.latency_ms")
	case start:
		set = append(set, "latency_ms = epoch_ms(calls.ended_at) - epoch_ms(a.started_at)")
	default:
		set = append(set, "latency_ms = epoch_ms(a.ended_at) - epoch_ms(calls.started_at)")
	}
	return strings.Join(set, ", ")
}

// kindCond selects the stage rows of one kind of part.
func kindCond(start, end bool) string {
	return fmt.Sprintf("a.has_start = %t AND a.has_end = %t", start, end)
}

// mergeKindSQL updates the stored rows of the staged parts of one kind.
func mergeKindSQL(start, end bool) string {
	return "UPDATE calls SET " + sideSet(start, end) + " FROM " + stageTable + " AS a WHERE calls.rowid = a._rid AND " + kindCond(start, end)
}

// keepOutputSQL is run before the ends are merged: an end part that
// replaces the output of a row whose dump references it keeps that output
// inside the dump first ("o=" form, see dumprefs.go).
const keepOutputSQL = "UPDATE calls SET otel_dump = '" + embeddedOutputPrefix + "' || strlen(coalesce(calls.output, '')) || ':' || coalesce(calls.output, '') || calls.otel_dump" +
	" FROM " + stageTable + " AS a WHERE calls.rowid = a._rid AND a.has_end AND NOT a.has_start" +
	" AND starts_with(calls.otel_dump, '" + refPrefix + "') AND contains(calls.otel_dump, chr(1) || 'o')"

// matchSQL sets each staged part's _rid to its stored row's id, and
// _row_start to the row's start time if it has a start (the minute the
// merge changes, see minutes.go); source is the calls table, or the part
// of it the parts' rows lie in (with the columns matchColumns).
func matchSQL(source string) string {
	return "UPDATE " + stageTable + " AS a SET _rid = c.rowid, _row_start = CASE WHEN c.has_start THEN c.started_at END FROM " + source +
		" AS c WHERE c.project_id = a.project_id AND c.id = a.id"
}

// insertUnmatchedSQL inserts the staged parts that matched no row.
var insertUnmatchedSQL = "INSERT INTO calls (" + strings.Join(stageColumns, ", ") + ") SELECT " + strings.Join(stageColumns, ", ") +
	" FROM " + stageTable + " WHERE _rid IS NULL"

// unmatchedStartlessSQL lists the staged parts without a start that
// matched no row: rows about to be stored without a start.
const unmatchedStartlessSQL = "SELECT project_id, id FROM " + stageTable + " WHERE _rid IS NULL AND NOT has_start"

// stageTable holds the parts of known calls that one write merges into
// calls: a temporary table of the writing connection, filled by the
// appender and emptied after the merge, inside the write's transaction.
// DuckDB's query appender does both in one call, but under a buffer pool
// that evicts, its flush crashed the process (see ADR 0020 and
// TestStoreUnderConcurrentWritesReadsAndCheckpoints).
const stageTable = "temp.main.call_parts"

// stageTableSQL creates stageTable on a connection's first merge, with the calls
// table's types for stageColumns, _rid, the row id a part merges into, and
// _row_start, that row's start time.
var stageTableSQL = "CREATE TEMP TABLE call_parts AS SELECT " + strings.Join(stageColumns, ", ") +
	", NULL::BIGINT AS _rid, NULL::TIMESTAMP AS _row_start FROM calls LIMIT 0"

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
	s.reportIndex(false)
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
	marks := minuteMarks{}
	for start := 0; start < len(ops); {
		end := start
		for end < len(ops) && ops[end].Part != nil {
			end++
		}
		if end > start {
			if err := s.appendParts(conn, ops[start:end], marks); err != nil {
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
			results[start].NumDeleted, err = s.deleteCalls(ctx, conn, op.Delete, marks)
		}
		if err != nil {
			return nil, err
		}
		start++
	}
	if err := marks.flush(ctx, conn); err != nil {
		return nil, err
	}
	return results, nil
}

// appendParts writes a run of merged parts: calls the id filter has never
// seen go straight in through the appender; the rest are merged with
// their stored rows. marks gets the minutes they change.
func (s *Store) appendParts(conn *sql.Conn, ops []storage.CallOp, marks minuteMarks) error {
	var fresh, known []storage.CallOp
	for _, op := range ops {
		if c := &op.Part.Call; op.Part.Kind.HasStart() {
			s.located.record(c.ProjectID, c.ID, c.TraceID, c.StartedAt)
			marks.add(c.ProjectID, c.StartedAt)
		}
		if s.ids.mayContain(op.Part.Call.ProjectID, op.Part.Call.ID) {
			known = append(known, op)
			continue
		}
		if !op.Part.Kind.HasStart() {
			s.located.recordStartless(op.Part.Call.ProjectID, op.Part.Call.ID)
		}
		fresh = append(fresh, op)
	}
	err := conn.Raw(func(dc any) error {
		if err := s.insertFresh(dc.(driver.Conn), fresh); err != nil {
			return err
		}
		return s.mergeKnown(dc.(driver.Conn), known, marks)
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
	usages, err := partUsages(dc, ops)
	if err != nil {
		return err
	}
	app, err := duckdbdriver.NewAppenderWithColumns(dc, callsCatalog, "main", "calls", stageColumns)
	if err != nil {
		return fmt.Errorf("calls appender: %w", err)
	}
	return s.appendAll(app, ops, usages, "insert calls")
}

func (s *Store) mergeKnown(dc driver.Conn, ops []storage.CallOp, marks minuteMarks) error {
	if len(ops) == 0 {
		return nil
	}
	ex, ok := dc.(driver.ExecerContext)
	if !ok {
		return errors.New("merge calls: the driver connection runs no statements")
	}
	qr, ok := dc.(driver.QueryerContext)
	if !ok {
		return errors.New("merge calls: the driver connection runs no queries")
	}
	exec := func(what, stmt string, args ...driver.NamedValue) (int64, error) {
		res, err := ex.ExecContext(context.Background(), stmt, args)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		return n, nil
	}
	usages, err := partUsages(dc, ops)
	if err != nil {
		return err
	}
	app, err := duckdbdriver.NewAppenderWithColumns(dc, "temp", "main", "call_parts", stageColumns)
	if err != nil { // the connection's first merge: the stage table is not there yet
		if _, err := exec("calls stage table", stageTableSQL); err != nil {
			return err
		}
		if app, err = duckdbdriver.NewAppenderWithColumns(dc, "temp", "main", "call_parts", stageColumns); err != nil {
			return fmt.Errorf("calls stage appender: %w", err)
		}
	}
	if err := s.appendAll(app, ops, usages, "stage calls"); err != nil {
		return err
	}
	source, args := callsTable, []driver.NamedValue(nil)
	if ranges, ok := s.located.mergeWithin(ops); ok {
		source, args = withinSource(ranges)
	}
	matched, err := exec("match calls to merge", matchSQL(source), args...)
	if err != nil {
		return err
	}
	if matched > 0 {
		if err := markMatched(qr, marks); err != nil {
			return err
		}
	}
	if matched < int64(len(ops)) {
		if err := s.noteUnmatchedStartless(qr, ops); err != nil {
			return err
		}
		if _, err := exec("insert calls", insertUnmatchedSQL); err != nil {
			return err
		}
	}
	var kinds [4]bool
	for _, op := range ops {
		kinds[op.Part.Kind&storage.PartComplete] = true
	}
	if kinds[storage.PartEnd] {
		if _, err := exec("keep outputs in raw spans", keepOutputSQL); err != nil {
			return err
		}
	}
	for _, k := range []storage.PartKind{storage.PartComplete, storage.PartStart, storage.PartEnd} {
		if kinds[k] {
			if _, err := exec("merge calls", mergeKindSQL(k.HasStart(), k.HasEnd())); err != nil {
				return err
			}
		}
	}
	_, err = exec("empty the calls stage table", "DELETE FROM "+stageTable)
	return err
}

// callsTable is the calls table as merges name it.
const callsTable = "main.calls"

// matchColumns are the columns matchSQL reads of the stored rows.
const matchColumns = "rowid, project_id, id, has_start, started_at"

// withinSource is the part of the calls table that started within
// ranges, keyed for matchSQL (sqlgen.RangeScans). No ranges: no row.
func withinSource(ranges []sqlgen.TimeRange) (string, []driver.NamedValue) {
	if len(ranges) == 0 {
		return "(SELECT " + matchColumns + " FROM " + callsTable + " WHERE false)", nil
	}
	args := make([]driver.NamedValue, 0, 2*len(ranges))
	bind := func(t time.Time) string {
		args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: t.UTC()})
		return fmt.Sprintf("$%d", len(args))
	}
	source := sqlgen.RangeScans(callsTable, matchColumns, ranges, bind)
	return source, args
}

// noteUnmatchedStartless records in the locator the staged parts about to
// be inserted without a start.
func (s *Store) noteUnmatchedStartless(qr driver.QueryerContext, ops []storage.CallOp) error {
	if !slices.ContainsFunc(ops, func(op storage.CallOp) bool { return !op.Part.Kind.HasStart() }) {
		return nil
	}
	err := eachDriverRow(qr, unmatchedStartlessSQL, nil, 2, func(vals []driver.Value) {
		project, _ := vals[0].(string)
		id, _ := vals[1].(string)
		s.located.recordStartless(project, id)
	})
	if err != nil {
		return fmt.Errorf("list calls stored without a start: %w", err)
	}
	return nil
}

// eachDriverRow runs query with args on a merge's driver connection and
// calls each with every row of its cols columns.
func eachDriverRow(qr driver.QueryerContext, query string, args []driver.NamedValue, cols int, each func([]driver.Value)) error {
	rows, err := qr.QueryContext(context.Background(), query, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, cols)
	for {
		switch err := rows.Next(vals); {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		each(vals)
	}
}

func (s *Store) appendAll(app *duckdbdriver.Appender, ops []storage.CallOp, usages []partUsage, what string) error {
	dumps := s.dumps.packAll(ops)
	for i, op := range ops {
		if err := app.AppendRow(s.partRow(op.Part, dumps[i], usages[i])...); err != nil {
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
// packed and its usage read (partUsages).
func (s *Store) partRow(p *storage.CallPart, dump any, u partUsage) []driver.Value {
	c := &p.Call
	row := make([]driver.Value, 0, len(stageColumns))
	row = append(row, p.Kind.HasStart(), p.Kind.HasEnd())
	for _, f := range stageFields {
		switch {
		case f.Side == storage.SideKey:
			row = append(row, *f.Of(c).(*string))
		case f.Column == dumpColumn:
			row = append(row, dump)
		default:
			row = append(row, columnValue(f.Of(c)))
		}
	}
	for _, d := range derivedColumns {
		row = append(row, d.value(p, u))
	}
	return row
}

// columnValue is a call field's value as the calls table holds it, with
// NULL for a field that is not set.
func columnValue(v any) driver.Value {
	switch x := v.(type) {
	case *string:
		return nullStr(*x)
	case *time.Time:
		return nullTime(*x)
	case **time.Time:
		return nullTimePtr(*x)
	case *json.RawMessage:
		return nullJSON(*x)
	case **string:
		return nullStrPtr(*x)
	case **int64:
		return nullInt(*x)
	case *[]string:
		return refsText(*x)
	}
	panic(fmt.Sprintf("duckdb: call field of type %T", v))
}

// callTokens is the total_tokens column of a part's row
// (migrations/0014_calls_tokens.sql): NULL for a part without an end or
// without usage; for one model's typed usage what sqlgen's typed total
// reads (total_tokens when non-zero, else prompt plus completion); else
// parsed, the total partUsages computed.
func callTokens(p *storage.CallPart, u typedUsage, parsed any) driver.Value {
	switch {
	case !p.Kind.HasEnd():
		return nil
	case u.models == nil: // not typed: readers parse the summary
		return parsed
	case !u.Typed(): // no usage
		return nil
	case u.Total != 0:
		return u.Total
	}
	return u.Prompt + u.Completion
}

// partUsage is a part's usage as its row holds it: the typed columns,
// and the token total of a usage they cannot hold.
type partUsage struct {
	typedUsage
	parsedTokens driver.Value
}

// partUsages reads each part's summary usage once. The token totals of
// the parts whose usage the typed form cannot hold are computed on the
// write's connection with the readers' own SQL (sqlgen.SummaryTokens);
// such usage is rare, so most writes run no statement here.
func partUsages(dc driver.Conn, ops []storage.CallOp) ([]partUsage, error) {
	usages := make([]partUsage, len(ops))
	var at []int
	var summaries []string
	for i, op := range ops {
		c := &op.Part.Call
		usages[i].typedUsage = usageColumns(c.Summary)
		if op.Part.Kind.HasEnd() && usages[i].models == nil { // not typed: readers parse the summary
			at, summaries = append(at, i), append(summaries, string(c.Summary))
		}
	}
	if len(at) == 0 {
		return usages, nil
	}
	qr, ok := dc.(driver.QueryerContext)
	if !ok {
		return nil, errors.New("token totals: the driver connection runs no queries")
	}
	st := sqlgen.SummaryTokens(sqlgen.DuckDB{}, summaries)
	args := make([]driver.NamedValue, len(st.Args))
	for i, a := range st.Args {
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	var bad error
	err := eachDriverRow(qr, st.SQL, args, 2, func(vals []driver.Value) {
		i, ok := vals[0].(int64)
		if !ok || i < 0 || int(i) >= len(at) {
			bad = fmt.Errorf("token totals: row %v of %d summaries", vals[0], len(at))
			return
		}
		usages[at[i]].parsedTokens = vals[1]
	})
	if err != nil {
		return nil, fmt.Errorf("token totals: %w", err)
	}
	return usages, bad
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
