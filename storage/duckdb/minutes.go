package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/latencyhist"
	"github.com/weftdev/weft/storage/sqlgen"
)

// Chart rollups (ADR 0027). The calls of each project are summed per
// minute of their start, op and root flag into call_minutes and
// call_minute_usage (migrations/0013_calls_minutes.sql). Every write of
// calls notes the minutes it changed in call_minutes_dirty, in its own
// transaction; a refresher recomputes those minutes from the calls and
// clears them, in a write of its own. A chart reads the rollups of the
// clean minutes and computes the dirty ones from the calls, in one
// snapshot, so it answers what a scan of the calls would: counts and
// usage exactly, latency quantiles within half a histogram bin.

// refreshEvery is how often the refresher looks for dirty minutes.
const refreshEvery = time.Second

// refreshBatch bounds the minutes one refresh recomputes, and so how long
// it holds the write lock: a minute of a 10M-call day is some 7,000 calls.
const refreshBatch = 30

// maxMinuteRanges bounds the range scans a minute statement is split
// into; more dirty runs than that are read through wider ranges and
// picked out by minute.
const maxMinuteRanges = 16

// projectMinute is one minute of one project's calls.
type projectMinute struct {
	project string
	minute  int64
}

// minuteMarks collects the minutes one write changes.
type minuteMarks map[projectMinute]struct{}

// minuteOf is sqlgen.MinuteExpr in Go.
func minuteOf(t time.Time) int64 {
	us := t.UnixMicro()
	m := us / 60_000_000
	if us%60_000_000 < 0 {
		m--
	}
	return m
}

// minuteStart is the start of minute m.
func minuteStart(m int64) time.Time { return time.UnixMilli(m * 60_000).UTC() }

// add marks the minute of a call of project that started at started.
func (m minuteMarks) add(project string, started time.Time) {
	if !started.IsZero() {
		m[projectMinute{project, minuteOf(started)}] = struct{}{}
	}
}

// flush stores the marks in call_minutes_dirty, in conn's transaction.
func (m minuteMarks) flush(ctx context.Context, conn *sql.Conn) error {
	if len(m) == 0 {
		return nil
	}
	projects, minutes := make([]string, 0, len(m)), make([]int64, 0, len(m))
	for k := range m {
		projects, minutes = append(projects, k.project), append(minutes, k.minute)
	}
	_, err := conn.ExecContext(ctx, "INSERT INTO call_minutes_dirty SELECT unnest(?::VARCHAR[]), unnest(?::BIGINT[])", projects, minutes)
	if err != nil {
		return fmt.Errorf("note the minutes a write changed: %w", err)
	}
	return nil
}

// markMatchedSQL lists the minutes of the stored rows a merge matched
// that had a start: the minutes whose sums the merge changes besides its
// own start parts'.
var markMatchedSQL = "SELECT DISTINCT project_id, _row_start FROM " + stageTable + " WHERE _row_start IS NOT NULL"

// markMatched adds to marks the minutes of the stored rows the staged
// parts matched (markMatchedSQL), on the merge's driver connection.
func markMatched(qr driver.QueryerContext, marks minuteMarks) error {
	err := eachDriverRow(qr, markMatchedSQL, nil, 2, func(vals []driver.Value) {
		project, _ := vals[0].(string)
		started, _ := vals[1].(time.Time)
		marks.add(project, started)
	})
	if err != nil {
		return fmt.Errorf("list the minutes a merge changes: %w", err)
	}
	return nil
}

// backfillMinutes marks dirty, once, every minute of the calls stored
// before the rollups existed, and once more every minute rolled up before
// they kept each model's entries and cache sums (migrations/
// 0018_calls_minutes_stats.sql), so the refresher rolls them up.
func backfillMinutes(ctx context.Context, conn *sql.Conn) error {
	var done bool
	err := conn.QueryRowContext(ctx, "SELECT (SELECT count(*) > 0 FROM call_minutes_state) AND "+
		"(SELECT count(*) > 0 FROM calls_columns_filled WHERE column_name = '"+minuteStatsColumns+"')").Scan(&done)
	if err != nil || done {
		return err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	for _, stmt := range []string{
		"INSERT INTO call_minutes_dirty SELECT DISTINCT project_id, " + sqlgen.MinuteExpr("started_at") +
			" FROM calls WHERE has_start AND started_at IS NOT NULL",
		"INSERT INTO call_minutes_state SELECT true WHERE NOT EXISTS (SELECT 1 FROM call_minutes_state)",
		"INSERT INTO calls_columns_filled VALUES ('" + minuteStatsColumns + "')",
		"COMMIT",
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			rollback(conn)
			return fmt.Errorf("chart rollups: mark the stored calls: %w", err)
		}
	}
	return nil
}

// minuteStatsColumns notes in calls_columns_filled that the rollups hold
// each model's entries and cache sums.
const minuteStatsColumns = "call_minute_usage.entries"

// minutesRefresher runs refreshMinutes every refreshEvery until stopped.
type minutesRefresher struct {
	stop context.CancelFunc
	done chan struct{}
}

func (s *Store) startMinutesRefresher(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.refresher = &minutesRefresher{stop: cancel, done: make(chan struct{})}
	go s.refreshLoop(ctx, every)
}

// stopMinutesRefresher stops the refresher and waits for it; a refresh
// in flight is rolled back, its minutes stay dirty.
func (s *Store) stopMinutesRefresher() {
	if s.refresher != nil {
		s.refresher.stop()
		<-s.refresher.done
	}
}

func (s *Store) refreshLoop(ctx context.Context, every time.Duration) {
	defer close(s.refresher.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for ctx.Err() == nil && s.calls.err() == nil {
			n, err := s.refreshMinutes(ctx, refreshBatch)
			if err != nil {
				if ctx.Err() == nil && s.calls.err() == nil {
					s.logger.Warn("chart rollups: refresh failed; the minutes stay dirty, are computed from calls when read (slower charts) and refreshed again next tick; if it repeats, check the free space in data_dir", "err", err)
				}
				break
			}
			if n < refreshBatch {
				break
			}
		}
	}
}

// refreshMinutes recomputes up to limit dirty minutes, the latest first,
// and clears them, in one write; it returns how many it recomputed.
func (s *Store) refreshMinutes(ctx context.Context, limit int) (int, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var n int
	err := s.inCallsTx(ctx, func(conn *sql.Conn) error {
		due, err := dueMinutes(ctx, conn, limit)
		if err != nil {
			return err
		}
		for project, minutes := range due {
			if err := rollUp(ctx, conn, project, minutes); err != nil {
				return err
			}
			n += len(minutes)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("chart rollups: %w", err)
	}
	return n, nil
}

// dueMinutes lists up to limit dirty minutes per project, each sorted.
func dueMinutes(ctx context.Context, conn *sql.Conn, limit int) (map[string][]int64, error) {
	rows, err := conn.QueryContext(ctx, "SELECT project_id, minute FROM call_minutes_dirty GROUP BY ALL ORDER BY minute DESC, project_id LIMIT ?", limit)
	if err != nil {
		return nil, fmt.Errorf("list dirty minutes: %w", err)
	}
	defer rows.Close()
	due := map[string][]int64{}
	for rows.Next() {
		var k projectMinute
		if err := rows.Scan(&k.project, &k.minute); err != nil {
			return nil, err
		}
		due[k.project] = append(due[k.project], k.minute)
	}
	for _, m := range due {
		slices.Sort(m)
	}
	return due, rows.Err()
}

// minuteGroup is the key of a rollup row.
type minuteGroup struct {
	minute int64
	op     sql.NullString
	root   bool
}

// rolledMinute is one call_minutes row being built.
type rolledMinute struct {
	calls, errors int64
	hist          latencyhist.Histogram
}

// minuteUsage is one call_minute_usage row.
type minuteUsage struct {
	k     minuteGroup
	model sql.NullString
	sums  usageSums
}

// usageSums are one model's sums in a rollup row, in the order of
// sqlgen.MinuteUsageColumns: requests, prompt, completion, total, cache
// read and cache creation tokens, then the calls with an entry.
type usageSums [7]int64

// liveMinutes computes, from the calls src selects, the rows the rollups
// keep for them: what the refresher stores and what a read takes for the
// minutes not rolled up.
func liveMinutes(ctx context.Context, qr queryer, src sqlgen.MinuteSource) (map[minuteGroup]*rolledMinute, []minuteUsage, error) {
	d := sqlgen.NewDuckDB()
	groups := map[minuteGroup]*rolledMinute{}
	group := func(k minuteGroup) *rolledMinute {
		g := groups[k]
		if g == nil {
			g = &rolledMinute{}
			groups[k] = g
		}
		return g
	}
	var calls, errs int64
	if err := eachMinuteRow(ctx, qr, sqlgen.MinuteCounts(d, src), []any{&calls, &errs}, func(k minuteGroup) {
		g := group(k)
		g.calls, g.errors = calls, errs
	}); err != nil {
		return nil, nil, err
	}
	var bin int32
	var n, total int64
	if err := eachMinuteRow(ctx, qr, sqlgen.MinuteBins(d, src), []any{&bin, &n, &total}, func(k minuteGroup) {
		group(k).hist.Add(bin, n, total)
	}); err != nil {
		return nil, nil, err
	}
	var usage []minuteUsage
	var u minuteUsage
	if err := eachMinuteRow(ctx, qr, sqlgen.MinuteUsage(d, src), append([]any{&u.model}, u.sums.dest()...),
		func(k minuteGroup) {
			u.k = k
			usage = append(usage, u)
		}); err != nil {
		return nil, nil, err
	}
	return groups, usage, nil
}

// rollUp recomputes the rollups of a project's minutes (sorted) from its
// calls and replaces theirs, clearing the minutes' dirty marks.
func rollUp(ctx context.Context, conn *sql.Conn, project string, minutes []int64) error {
	groups, usage, err := liveMinutes(ctx, conn, minuteSource(project, minutes, sqlgen.MinuteFilter{}))
	if err != nil {
		return err
	}
	for _, table := range []string{"call_minutes", "call_minute_usage", "call_minutes_dirty"} {
		if _, err := conn.ExecContext(ctx, "DELETE FROM "+table+" WHERE project_id = ? AND minute IN (SELECT unnest(?::BIGINT[]))",
			project, minutes); err != nil {
			return fmt.Errorf("clear rolled-up minutes: %w", err)
		}
	}
	return conn.Raw(func(dc any) error {
		app, err := duckdbdriver.NewAppenderWithColumns(dc.(driver.Conn), callsCatalog, "main", "call_minutes",
			[]string{"project_id", "minute", "op_name", "is_root", "calls", "errors", "latency"})
		if err != nil {
			return fmt.Errorf("rollup appender: %w", err)
		}
		for k, g := range groups {
			var lat driver.Value
			if len(g.hist.Entries()) > 0 {
				lat = g.hist.Encode(nil)
			}
			if err := app.AppendRow(project, k.minute, nullOp(k.op), k.root, g.calls, g.errors, lat); err != nil {
				return errors.Join(fmt.Errorf("roll up minutes: %w", err), app.Close())
			}
		}
		if err := app.Close(); err != nil {
			return fmt.Errorf("roll up minutes: %w", err)
		}
		if len(usage) == 0 {
			return nil
		}
		app, err = duckdbdriver.NewAppenderWithColumns(dc.(driver.Conn), callsCatalog, "main", "call_minute_usage",
			append([]string{"project_id", "minute", "op_name", "is_root", "model"}, usageSumColumns...))
		if err != nil {
			return fmt.Errorf("rollup appender: %w", err)
		}
		for _, u := range usage {
			row := []driver.Value{project, u.k.minute, nullOp(u.k.op), u.k.root, nullOp(u.model)}
			for _, v := range u.sums {
				row = append(row, v)
			}
			if err := app.AppendRow(row...); err != nil {
				return errors.Join(fmt.Errorf("roll up usage: %w", err), app.Close())
			}
		}
		if err := app.Close(); err != nil {
			return fmt.Errorf("roll up usage: %w", err)
		}
		return nil
	})
}

// usageSumColumns are call_minute_usage's sums, as usageSums orders them.
var usageSumColumns = []string{"requests", "prompt_tokens", "completion_tokens", "total_tokens",
	"cache_read_tokens", "cache_creation_tokens", "entries"}

// dest points at each sum, for a Scan.
func (u *usageSums) dest() []any {
	out := make([]any, len(u))
	for i := range u {
		out[i] = &u[i]
	}
	return out
}

func nullOp(s sql.NullString) driver.Value {
	if !s.Valid {
		return nil
	}
	return s.String
}

// minuteSource selects a project's calls of minutes (sorted) matching f:
// one range scan per run of consecutive minutes, or, past
// maxMinuteRanges runs, wider ranges picked out by minute.
func minuteSource(project string, minutes []int64, f sqlgen.MinuteFilter) sqlgen.MinuteSource {
	src := sqlgen.MinuteSource{ProjectID: project, Filter: f}
	for i := 0; i < len(minutes); {
		j := i + 1
		for j < len(minutes) && minutes[j] == minutes[j-1]+1 {
			j++
		}
		src.Ranges = append(src.Ranges, sqlgen.TimeRange{From: minuteStart(minutes[i]), To: minuteStart(minutes[j-1] + 1)})
		i = j
	}
	if len(src.Ranges) > maxMinuteRanges {
		src.Ranges, src.Minutes = coarsen(src.Ranges, maxMinuteRanges), minutes
	}
	return src
}

// eachMinuteRow runs st, whose rows are a minute group and then the
// columns dest points to, and calls use with each row's group once dest
// holds the rest of the row.
func eachMinuteRow(ctx context.Context, q queryer, st sqlgen.Statement, dest []any, use func(minuteGroup)) error {
	var k minuteGroup
	all := append([]any{&k.minute, &k.op, &k.root}, dest...)
	err := eachRowOn(ctx, q, st, func(rows *sql.Rows) error {
		if err := rows.Scan(all...); err != nil {
			return err
		}
		use(k)
		return nil
	})
	if err != nil {
		return fmt.Errorf("minute sums: %w", err)
	}
	return nil
}

// minuteFilter is q's filter as the rollups keep it; ok is false when q
// filters on anything else (a new filter field counts as anything else).
func minuteFilter(q storage.CallsQuery) (sqlgen.MinuteFilter, bool) {
	rest := q.Filter
	rest.OpNames, rest.TraceRootsOnly = nil, false
	ok := q.Where == nil && reflect.DeepEqual(rest, storage.CallsFilter{}) && len(q.Filter.OpNames) <= sqlgen.MaxFilterList
	return sqlgen.MinuteFilter{OpNames: q.Filter.OpNames, RootsOnly: q.Filter.TraceRootsOnly}, ok
}

// minutesServe reports whether the rollups can answer q, and with which
// filter: whole-minute buckets from a whole minute, and a filter of op
// names and roots alone (minuteFilter; any other scans the calls). A
// range that starts or ends inside a minute reads that minute's calls.
func minutesServe(q storage.CallsAggregateQuery) (sqlgen.MinuteFilter, bool) {
	f, ok := minuteFilter(q.Calls)
	return f, ok && q.BucketSeconds%60 == 0 && wholeMinute(q.BucketOrigin())
}

func wholeMinute(t time.Time) bool { return t.UnixMicro()%60_000_000 == 0 }

// chartSums adds up minutes into a chart's buckets.
type chartSums struct {
	first, width int64 // the buckets' origin minute; minutes per bucket
	buckets      map[int64]*rolledMinute
	usage        map[bucketModel]*storage.ModelUsageBucket
}

type bucketModel struct {
	bucket int64
	model  string
}

func newChartSums(q storage.CallsAggregateQuery) *chartSums {
	return &chartSums{first: minuteOf(q.BucketOrigin()), width: q.BucketSeconds / 60,
		buckets: map[int64]*rolledMinute{}, usage: map[bucketModel]*storage.ModelUsageBucket{}}
}

func (c *chartSums) bucket(minute int64) *rolledMinute {
	i := (minute - c.first) / c.width
	b := c.buckets[i]
	if b == nil {
		b = &rolledMinute{}
		c.buckets[i] = b
	}
	return b
}

func (c *chartSums) addUsage(minute int64, model string, sums usageSums) {
	k := bucketModel{(minute - c.first) / c.width, model}
	u := c.usage[k]
	if u == nil {
		u = &storage.ModelUsageBucket{Model: model}
		c.usage[k] = u
	}
	for i, to := range []*int64{&u.Requests, &u.PromptTokens, &u.CompletionTokens, &u.TotalTokens,
		&u.CacheReadInputTokens, &u.CacheCreationInputTokens, &u.Entries} {
		*to = addSat(*to, sums[i])
	}
}

// addSat adds, held at int64's bounds as the statements hold their sums.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// result is the aggregate: buckets with calls and usage, in order.
func (c *chartSums) result(q storage.CallsAggregateQuery) storage.CallsAggregate {
	var out storage.CallsAggregate
	idx := make([]int64, 0, len(c.buckets))
	for i, b := range c.buckets {
		if b.calls > 0 {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	for _, i := range idx {
		b := c.buckets[i]
		cb := storage.CallsBucket{Start: q.BucketStart(i), CallCount: b.calls, ErrorCount: b.errors,
			LatencyCount: b.hist.Count(), LatencySum: float64(b.hist.Sum())}
		cb.LatencyP50, cb.LatencyP95, cb.LatencyP99 = quantile(&b.hist, 0.5), quantile(&b.hist, 0.95), quantile(&b.hist, 0.99)
		cb.LatencyMin, cb.LatencyMax = quantile(&b.hist, 0), quantile(&b.hist, 1)
		for _, l := range q.Quantiles {
			cb.LatencyQuantiles = append(cb.LatencyQuantiles, quantile(&b.hist, l))
		}
		if q.LatencyHistograms && b.hist.Count() > 0 {
			cb.LatencyHistogram = &b.hist
		}
		out.Buckets = append(out.Buckets, cb)
	}
	keys := make([]bucketModel, 0, len(c.usage))
	for k := range c.usage {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].bucket != keys[j].bucket {
			return keys[i].bucket < keys[j].bucket
		}
		return keys[i].model < keys[j].model
	})
	for _, k := range keys {
		u := *c.usage[k]
		u.Start = q.BucketStart(k.bucket)
		out.Usage = append(out.Usage, u)
	}
	return out
}

func quantile(h *latencyhist.Histogram, q float64) *float64 {
	v, ok := h.Quantile(q)
	if !ok {
		return nil
	}
	return &v
}

// aggregateFromMinutes answers q (minutesServe said it can) from the
// rollups of its clean minutes and the calls of its dirty ones, read in
// one snapshot so that a refresh between them counts nothing twice.
func (s *Store) aggregateFromMinutes(ctx context.Context, q storage.CallsAggregateQuery, f sqlgen.MinuteFilter) (storage.CallsAggregate, error) {
	var out storage.CallsAggregate
	err := s.inReadSnapshot(ctx, func(ctx context.Context, qr queryer) (err error) {
		out, err = sumMinutes(ctx, qr, q, f)
		return err
	})
	if err != nil {
		return storage.CallsAggregate{}, fmt.Errorf("aggregate calls: %w", err)
	}
	return out, nil
}

func sumMinutes(ctx context.Context, qr queryer, q storage.CallsAggregateQuery, f sqlgen.MinuteFilter) (storage.CallsAggregate, error) {
	d := sqlgen.NewDuckDB()
	project, from, to := q.Calls.ProjectID, minuteOf(q.Start), minuteOf(q.End)
	sums := newChartSums(q)
	var edges []sqlgen.TimeRange // the parts of minutes the range starts or ends inside
	if !wholeMinute(q.Start) {
		from++
		edges = append(edges, sqlgen.TimeRange{From: q.Start, To: minTime(q.End, minuteStart(from))})
	}
	if !wholeMinute(q.End) && to >= from {
		edges = append(edges, sqlgen.TimeRange{From: minuteStart(to), To: q.End})
	}
	for _, e := range edges {
		if err := sums.addLive(ctx, qr, sqlgen.MinuteSource{ProjectID: project, Ranges: []sqlgen.TimeRange{e}, Filter: f}); err != nil {
			return storage.CallsAggregate{}, err
		}
	}
	if from >= to {
		return sums.result(q), nil
	}
	var calls, errs int64
	var lat sql.RawBytes
	if err := eachMinute(ctx, qr, sqlgen.StoredMinutes(d, "call_minutes", "m.minute, m.calls, m.errors, m.latency", project, from, to, f),
		[]any{&calls, &errs, &lat}, func(minute int64) error {
			b := sums.bucket(minute)
			b.calls, b.errors = b.calls+calls, b.errors+errs
			if err := b.hist.AddEncoded(lat); len(lat) > 0 && err != nil {
				return fmt.Errorf("chart rollup of minute %d: %w", minute, err)
			}
			return nil
		}); err != nil {
		return storage.CallsAggregate{}, err
	}
	var model sql.NullString
	var usage usageSums
	if err := eachMinute(ctx, qr, sqlgen.StoredMinutes(d, "call_minute_usage",
		"m.minute, m.model, "+storedUsageSums(), project, from, to, f),
		append([]any{&model}, usage.dest()...), func(minute int64) error {
			sums.addUsage(minute, model.String, usage)
			return nil
		}); err != nil {
		return storage.CallsAggregate{}, err
	}
	dirty, err := dirtyWithin(ctx, qr, project, from, to)
	if err != nil || len(dirty) == 0 {
		return sums.result(q), err
	}
	if err := sums.addLive(ctx, qr, minuteSource(project, dirty, f)); err != nil {
		return storage.CallsAggregate{}, err
	}
	return sums.result(q), nil
}

// storedUsageSums selects a call_minute_usage row's sums in usageSums'
// order.
func storedUsageSums() string {
	cols := make([]string, len(usageSumColumns))
	for i, c := range usageSumColumns {
		cols[i] = "coalesce(m." + c + ", 0)"
	}
	return strings.Join(cols, ", ")
}

// addLive adds the minutes of the calls src selects, computed from the
// calls.
func (c *chartSums) addLive(ctx context.Context, qr queryer, src sqlgen.MinuteSource) error {
	groups, live, err := liveMinutes(ctx, qr, src)
	if err != nil {
		return err
	}
	for k, g := range groups {
		b := c.bucket(k.minute)
		b.calls, b.errors = b.calls+g.calls, b.errors+g.errors
		b.hist.Merge(&g.hist)
	}
	for _, u := range live {
		c.addUsage(u.k.minute, u.model.String, u.sums)
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// dirtyWithin lists, sorted, a project's dirty minutes in [from, to).
func dirtyWithin(ctx context.Context, qr queryer, project string, from, to int64) ([]int64, error) {
	st := sqlgen.Statement{SQL: "SELECT DISTINCT minute FROM call_minutes_dirty WHERE project_id = ? AND minute >= ? AND minute < ? ORDER BY minute",
		Args: []any{project, from, to}}
	var dirty []int64
	err := eachMinute(ctx, qr, st, nil, func(m int64) error {
		dirty = append(dirty, m)
		return nil
	})
	return dirty, err
}

// eachMinute runs st, whose rows are a minute and then the columns dest
// points to, and calls use with each row's minute.
func eachMinute(ctx context.Context, qr queryer, st sqlgen.Statement, dest []any, use func(minute int64) error) error {
	var minute int64
	all := append([]any{&minute}, dest...)
	err := eachRowOn(ctx, qr, st, func(rows *sql.Rows) error {
		if err := rows.Scan(all...); err != nil {
			return fmt.Errorf("chart rollups: %w", err)
		}
		return use(minute)
	})
	return err
}

// expireMinutes follows an expiry of the calls of the projects where
// selects that started in [from, before) (a zero from: any time before):
// the rollups of the minutes wholly inside go, and the minutes the bounds
// fall in, part expired, are marked dirty.
func expireMinutes(ctx context.Context, conn *sql.Conn, where string, args []any, from, before time.Time) error {
	cut := minuteOf(before)
	edges, inside, bounds := "minute = ?", "minute < ?", []any{cut}
	if !from.IsZero() {
		lo := minuteOf(from)
		edges, inside, bounds = "minute IN (?, ?)", "minute > ? AND minute < ?", []any{lo, cut}
	}
	for _, stmt := range []string{
		"INSERT INTO call_minutes_dirty SELECT DISTINCT project_id, minute FROM call_minutes WHERE " + where + " AND " + edges,
		"DELETE FROM call_minutes WHERE " + where + " AND " + inside,
		"DELETE FROM call_minute_usage WHERE " + where + " AND " + inside,
		"DELETE FROM call_minutes_dirty WHERE " + where + " AND " + inside,
	} {
		if _, err := conn.ExecContext(ctx, stmt, slices.Concat(args, bounds)...); err != nil {
			return fmt.Errorf("expire chart rollups: %w", err)
		}
	}
	return nil
}

// countFromMinutes counts a project's calls that f selects (q was
// accepted by minuteFilter) from the rollups of its clean minutes, the
// calls of its dirty ones and the calls without a start time, in one
// snapshot.
func (s *Store) countFromMinutes(ctx context.Context, project string, f sqlgen.MinuteFilter) (int64, error) {
	var n int64
	err := s.inReadSnapshot(ctx, func(ctx context.Context, qr queryer) (err error) {
		n, err = countMinutes(ctx, qr, project, f)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count calls: %w", err)
	}
	return n, nil
}

func countMinutes(ctx context.Context, qr queryer, project string, f sqlgen.MinuteFilter) (int64, error) {
	d := sqlgen.NewDuckDB()
	var total, timeless int64
	if err := scanOne(ctx, qr, sqlgen.StoredMinutes(d, "call_minutes", "coalesce(sum(m.calls), 0)", project, math.MinInt64, math.MaxInt64, f),
		&total); err != nil {
		return 0, fmt.Errorf("rolled-up counts: %w", err)
	}
	if err := scanOne(ctx, qr, sqlgen.TimelessCount(d, project, f), &timeless); err != nil {
		return 0, fmt.Errorf("calls without a start time: %w", err)
	}
	total += timeless
	dirty, err := dirtyWithin(ctx, qr, project, math.MinInt64, math.MaxInt64)
	if err != nil || len(dirty) == 0 {
		return total, err
	}
	var calls, errs int64
	err = eachMinuteRow(ctx, qr, sqlgen.MinuteCounts(d, minuteSource(project, dirty, f)), []any{&calls, &errs},
		func(minuteGroup) { total += calls })
	return total, err
}

// scanOne runs st and scans its one row into dest.
func scanOne(ctx context.Context, qr queryer, st sqlgen.Statement, dest ...any) error {
	rows, err := qr.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	return rows.Scan(dest...)
}
