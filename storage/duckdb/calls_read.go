package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// readPageSize bounds how many calls one query materialises. The driver
// buffers a whole result inside DuckDB before the first row is read, so a
// long stream is read page by page, all pages in one transaction so that
// concurrent writes cannot shift rows between pages.
const readPageSize = 10_000

// QueryCalls implements storage.CallReader.
func (s *Store) QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	return func(yield func(storage.StoredCall, error) bool) {
		if q.Limit > 0 && q.Limit <= s.pageSize {
			if !s.queryPageByStarts(ctx, q, yield) {
				s.queryPage(ctx, s.calls.guarded(s.stmts), q, yield)
			}
			return
		}
		if byIDs(q) && s.queryOnePage(ctx, q, yield) {
			return
		}
		s.queryInTransaction(ctx, q, yield)
	}
}

// queryInTransaction reads q page by page in one transaction, holding the
// calls guard for it (inReadSnapshot).
func (s *Store) queryInTransaction(ctx context.Context, q storage.CallsQuery, yield func(storage.StoredCall, error) bool) {
	err := s.inReadSnapshot(ctx, func(ctx context.Context, qr queryer) error {
		s.queryPages(ctx, qr, q, func(c storage.StoredCall, err error) bool {
			return yield(c, stoppedOr(ctx, err))
		})
		return nil
	})
	if err != nil {
		yield(storage.StoredCall{}, fmt.Errorf("query calls: %w", err))
	}
}

// inReadSnapshot runs read on a connection of its own, in one transaction
// (one snapshot of the calls), holding the calls guard for it. A
// checkpoint that stopped the read is the error it returns, not the
// interrupted statement's; read reports its own streamed errors the same
// way with stoppedOr.
func (s *Store) inReadSnapshot(ctx context.Context, read func(ctx context.Context, qr queryer) error) error {
	// Taken before the connection (released after it is back): a read
	// waiting for the guard must not hold one a checkpoint needs.
	ctx, release, err := s.calls.hold(ctx)
	if err != nil {
		return err
	}
	defer release()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return stoppedOr(ctx, err)
	}
	defer conn.Close()
	defer rollback(conn) // also after a BEGIN stopped part way
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return stoppedOr(ctx, err)
	}
	return stoppedOr(ctx, read(ctx, s.calls.checked(conn)))
}

// stoppedOr is err, or, when a checkpoint stopped the read of ctx, why.
func stoppedOr(ctx context.Context, err error) error {
	if err != nil {
		if stop := stoppedErr(ctx); stop != nil {
			return stop
		}
	}
	return err
}

// byIDs reports whether q reads a few calls or traces by id, whole: such a
// read (a trace, a set of calls) is nearly always one page.
func byIDs(q storage.CallsQuery) bool {
	n := max(len(q.Filter.CallIDs), len(q.Filter.TraceIDs))
	return n > 0 && n <= maxLocatedIDs && q.Limit == 0 && q.Offset == 0
}

// queryOnePage answers q in one prepared statement, outside a transaction,
// when it matches one page of calls at most; it reports false, having
// yielded nothing, when q needs more pages (read in a transaction, so that
// writes between pages cannot shift rows). A trace read so skips the
// transaction's statements and the parsing of its own: a tenth of its time.
func (s *Store) queryOnePage(ctx context.Context, q storage.CallsQuery, yield func(storage.StoredCall, error) bool) bool {
	q.Limit = s.pageSize + 1
	var calls []storage.StoredCall
	var failed error
	s.queryPage(ctx, s.calls.guarded(s.stmts), q, func(c storage.StoredCall, err error) bool {
		if err != nil {
			failed = err
			return false
		}
		calls = append(calls, c)
		return true
	})
	switch {
	case failed != nil:
		yield(storage.StoredCall{}, failed)
		return true
	case int64(len(calls)) > s.pageSize:
		return false
	}
	for _, c := range calls {
		if !yield(c, nil) {
			break
		}
	}
	return true
}

// queryPages reads q page by page on conn. The models a cost is priced
// with are read once for the whole stream.
func (s *Store) queryPages(ctx context.Context, conn queryer, q storage.CallsQuery, yield func(storage.StoredCall, error) bool) {
	priced := s.costModels(ctx, conn, q)
	if desc, ok := sqlgen.KeysetOrder(q.SortBy); ok && q.Offset == 0 && selects(q.Columns, "started_at", "id") {
		s.queryPagesByKeys(ctx, conn, q, desc, priced, yield)
		return
	}
	s.queryPagesByOffset(ctx, conn, q, slices.Concat(s.locate(q), priced), yield)
}

// queryPagesByOffset reads q page by page, each page after the calls of
// the pages before it by OFFSET, narrowed by opts.
func (s *Store) queryPagesByOffset(ctx context.Context, conn queryer, q storage.CallsQuery, opts []sqlgen.CallsOption, yield func(storage.StoredCall, error) bool) {
	remaining := q.Limit // 0 = unbounded
	page := q
	for {
		page.Limit = s.pageSize
		if remaining > 0 {
			page.Limit = min(remaining, s.pageSize)
		}
		n, ok := s.queryPageWith(ctx, conn, page, opts, yield)
		if !ok || n < page.Limit {
			return
		}
		page.Offset += n
		if remaining > 0 {
			if remaining -= n; remaining == 0 {
				return
			}
		}
	}
}

// queryPagesByKeys reads q (in sqlgen.KeysetOrder, from its first call)
// in windows of start time, each after the start time and id of the last
// call read (sqlgen.StartedAfter) and before the window's edge
// (sqlgen.StartedBefore): a window costs what its own calls cost, where an
// OFFSET, or a key alone, sorts every call after it again for each page.
// A window that holds more than a page is cut at the page; one that holds
// fewer is followed by a wider one, until the window passes the project's
// last start. The calls without a start time, which sort last and which
// no window holds, are read after the others by offset among themselves.
// Every page is rendered with opts besides its window.
func (s *Store) queryPagesByKeys(ctx context.Context, conn queryer, q storage.CallsQuery, desc bool, opts []sqlgen.CallsOption,
	yield func(storage.StoredCall, error) bool) {
	first, last, ok := s.startedSpan(ctx, conn, q.ProjectID, yield)
	if !ok {
		return
	}
	remaining := q.Limit // 0 = unbounded
	page := q
	from, end := first, last
	if desc {
		from, end = last, first
	}
	width := firstWindow
	var after *storage.StoredCall // the last call read
	for !from.IsZero() {
		page.Limit = s.pageSize
		if remaining > 0 {
			page.Limit = min(remaining, s.pageSize)
		}
		edge := from.Add(width)
		if desc {
			edge = from.Add(-width)
		}
		window := slices.Concat(opts, []sqlgen.CallsOption{sqlgen.StartedBefore(edge, desc)})
		if after != nil {
			window = append(window, sqlgen.StartedAfter(after.StartedAt, after.ID, desc))
		}
		var read storage.StoredCall
		n, ok := s.queryPageWith(ctx, conn, page, window, func(c storage.StoredCall, err error) bool {
			read = c
			return yield(c, err)
		})
		if !ok {
			return
		}
		if remaining > 0 {
			if remaining -= n; remaining == 0 {
				return
			}
		}
		if n > 0 {
			after = &read
		}
		passed := edge.After(end)
		if desc {
			passed = edge.Before(end)
		}
		switch {
		case n == page.Limit: // the window held a page or more: the next starts at its last call, twice as wide as the page was
			from, width = read.StartedAt, max(2*absDuration(read.StartedAt.Sub(from)), time.Millisecond)
		case passed: // every call with a start time is read
			from = time.Time{}
		default: // a sparse window: go on past it, wider
			from, width = edge, width*4
		}
	}
	page.Offset, page.Limit = 0, remaining
	s.queryPagesByOffset(ctx, conn, page, slices.Concat(opts, []sqlgen.CallsOption{sqlgen.StartedUnknown()}), yield)
}

// firstWindow is the span of start times a stream's first window reads.
const firstWindow = time.Minute

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// startedSpan reads the earliest and latest start of the project's live
// calls in conn's snapshot; both zero when none has one.
func (s *Store) startedSpan(ctx context.Context, conn queryer, project string, yield func(storage.StoredCall, error) bool) (first, last time.Time, ok bool) {
	st := sqlgen.StartedSpan(sqlgen.DuckDB{}, project)
	var lo, hi sql.NullTime
	if err := scanOne(ctx, conn, st, &lo, &hi); err != nil {
		yield(storage.StoredCall{}, fmt.Errorf("query calls: %w", err))
		return first, last, false
	}
	return lo.Time, hi.Time, true
}

// selects reports whether a calls query's columns (nil: all) hold every
// one of names.
func selects(columns []string, names ...string) bool {
	if columns == nil {
		return true
	}
	for _, n := range names {
		if !slices.Contains(columns, n) {
			return false
		}
	}
	return true
}

// maxFetchRanges bounds the calls, and so the start-time ranges, of a
// page queryPageByStarts reads: the pages of a UI or an SDK's first page,
// not the pages of a whole-project stream.
const maxFetchRanges = maxLocatedIDs

// queryPageByStarts reads one page of q in two steps: the ids, start
// times and row ids of the page's calls, then those calls by id within
// their start times (sqlgen.StartedWithin), a few ranges per statement,
// put back in page order here. One statement finds the page the same way
// but then joins it back to the table by row id, which DuckDB does by
// scanning every block between the page's lowest and highest row id: a
// block or two for a page of calls stored together (the default order by
// start time), the heavy columns of the whole table for a page sorted by
// latency, tokens or cost, whose calls lie anywhere (27 s on 10M OTLP
// calls). A statement per few ranges keeps the blocks pinned at once few:
// one union of a hundred ranges ran out of a 384 MB pool. Fetching by
// row-id ranges instead of start times was five times slower: a start
// time lets DuckDB skip vectors within a block, a row id only blocks.
//
// It reports false, having yielded nothing, when q is read better in one
// statement: already narrowed by id, asking for trace sizes, or a page of
// more than maxFetchRanges calls.
//
// The steps need no common snapshot: the second repeats q's filter, so a
// call changed in between is read as it is now, and one deleted in
// between is left out, as a later read would.
func (s *Store) queryPageByStarts(ctx context.Context, q storage.CallsQuery, yield func(storage.StoredCall, error) bool) bool {
	if s.located == nil || q.Limit > maxFetchRanges || q.IncludeTotalStorageSize || s.locate(q) != nil {
		return false
	}
	keys, lowRow, highRow, err := s.boundedPageKeys(ctx, q)
	switch {
	case errors.Is(err, errNoStartTime):
		return false
	case err != nil:
		yield(storage.StoredCall{}, fmt.Errorf("query calls: %w", err))
		return true
	case len(keys) == 0:
		return true
	}
	var groups []fetchGroup
	if highRow-lowRow < s.scatteredRows {
		// Stored together (the newest calls, a page by start time): one
		// range over all their starts reads the same blocks in one
		// statement, where ranges a millisecond wide would take one scan
		// per call. On 10M calls the newest 100 were fetched so in 9 ms,
		// by a join on their row ids in 24 ms.
		groups = []fetchGroup{spanGroup(keys)}
	} else {
		groups = fetchGroups(keys)
	}
	found := make(map[string]storage.StoredCall, len(keys))
	for _, g := range groups {
		part := q
		part.Filter.CallIDs, part.SortBy, part.Offset, part.Limit = g.ids, []storage.SortBy{}, 0, 0
		var failed error
		s.queryPageWith(ctx, s.calls.guarded(s.stmts), part, []sqlgen.CallsOption{sqlgen.StartedWithin(g.ranges)},
			func(c storage.StoredCall, err error) bool {
				if err != nil {
					failed = err
					return false
				}
				found[c.ID] = c
				return true
			})
		if failed != nil {
			yield(storage.StoredCall{}, failed)
			return true
		}
	}
	for _, k := range keys {
		if c, ok := found[k.id]; ok && !yield(c, nil) {
			return true
		}
	}
	return true
}

// boundedPageKeys reads the keys of q's page (pageKeys), bounded by its
// first sort key where sqlgen.CallsSortBound can bound it. A page that
// comes back short of q's limit despite a bound (a call deleted between
// the two statements) is read again without one.
func (s *Store) boundedPageKeys(ctx context.Context, q storage.CallsQuery) (keys []pageKey, lowRow, highRow int64, err error) {
	priced := s.costModels(ctx, s.calls.guarded(s.stmts), q)
	st, ok, err := sqlgen.CallsSortBound(sqlgen.DuckDB{}, q, priced...)
	switch {
	case err != nil:
		return nil, 0, 0, err
	case !ok:
		return s.pageKeys(ctx, q, priced...)
	}
	var bound sql.NullFloat64
	err = s.eachRow(ctx, st, func(rows *sql.Rows) error { return rows.Scan(&bound) })
	if err != nil {
		return nil, 0, 0, fmt.Errorf("page bound: %w", err)
	}
	if bound.Valid {
		keys, lowRow, highRow, err = s.pageKeys(ctx, q, slices.Concat(priced, []sqlgen.CallsOption{sqlgen.SortBound(bound.Float64)})...)
		if err != nil || int64(len(keys)) == q.Limit {
			return keys, lowRow, highRow, err
		}
	}
	return s.pageKeys(ctx, q, priced...)
}

// pageKeys reads the id, start time and row id of each call of q's page
// (sqlgen.CallsPageKeys), in page order, and the lowest and highest row id.
func (s *Store) pageKeys(ctx context.Context, q storage.CallsQuery, opts ...sqlgen.CallsOption) (keys []pageKey, lowRow, highRow int64, err error) {
	st, err := sqlgen.CallsPageKeys(sqlgen.DuckDB{}, q, opts...)
	if err != nil {
		return nil, 0, 0, err
	}
	lowRow, highRow = math.MaxInt64, math.MinInt64
	err = s.eachRow(ctx, st, func(rows *sql.Rows) error {
		var k pageKey
		var started sql.NullTime
		var row int64
		if err := rows.Scan(&k.id, &started, &row); err != nil {
			return err
		}
		if !started.Valid {
			return errNoStartTime
		}
		k.started = started.Time
		keys = append(keys, k)
		lowRow, highRow = min(lowRow, row), max(highRow, row)
		return nil
	})
	return keys, lowRow, highRow, err
}

// pageKey is a call of a page: its id and start time.
type pageKey struct {
	id      string
	started time.Time
}

// fetchGroup is what one statement of queryPageByStarts fetches.
type fetchGroup struct {
	ids    []string
	ranges []sqlgen.TimeRange
}

// maxFetchGroupRanges bounds the start-time ranges of one statement that
// fetches a page's calls: a page of 100 scattered calls is fetched as a
// few statements of this many range scans each (the 18 ms first page of
// docs/benchmarks.md).
const maxFetchGroupRanges = 16

// fetchGroups splits a page's calls into groups of at most
// maxFetchGroupRanges start-time ranges each (aroundStarts of each start).
func fetchGroups(keys []pageKey) []fetchGroup {
	sorted := slices.SortedFunc(slices.Values(keys), byStart)
	var (
		groups  []fetchGroup
		groupTo time.Time // end of the current group's last range
		inGroup int       // merged ranges in the current group
	)
	for _, k := range sorted {
		r := aroundStarts(k.started, k.started)
		if len(groups) == 0 || r.From.After(groupTo) {
			if len(groups) == 0 || inGroup == maxFetchGroupRanges {
				groups, inGroup = append(groups, fetchGroup{}), 0
			}
			inGroup++
		}
		g := &groups[len(groups)-1]
		g.ids, g.ranges = append(g.ids, k.id), append(g.ranges, r)
		if r.To.After(groupTo) {
			groupTo = r.To
		}
	}
	return groups
}

// spanGroup fetches keys in one statement, within one range from the
// first of their starts to the last (aroundStarts).
func spanGroup(keys []pageKey) fetchGroup {
	g := fetchGroup{ids: make([]string, len(keys))}
	for i, k := range keys {
		g.ids[i] = k.id
	}
	g.ranges = []sqlgen.TimeRange{aroundStarts(slices.MinFunc(keys, byStart).started, slices.MaxFunc(keys, byStart).started)}
	return g
}

func byStart(a, b pageKey) int { return a.started.Compare(b.started) }

// aroundStarts is the range of start times a fetch reads for calls that
// started from first to last: a millisecond wider either side, as the
// store keeps microseconds (as for the locator's ranges).
func aroundStarts(first, last time.Time) sqlgen.TimeRange {
	return sqlgen.TimeRange{From: first.Add(-time.Millisecond), To: last.Add(time.Millisecond)}
}

// errNoStartTime stops queryPageByStarts at a page call without a start
// time, which no time range can find.
var errNoStartTime = errors.New("a page call has no start time")

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryPage runs one page and yields its calls; it reports how many it
// yielded and whether the caller should go on.
func (s *Store) queryPage(ctx context.Context, db queryer, q storage.CallsQuery, yield func(storage.StoredCall, error) bool) (int64, bool) {
	return s.queryPageWith(ctx, db, q, slices.Concat(s.locate(q), s.costModels(ctx, db, q)), yield)
}

// queryPageWith is queryPage with the options q is rendered with.
func (s *Store) queryPageWith(ctx context.Context, db queryer, q storage.CallsQuery, opts []sqlgen.CallsOption, yield func(storage.StoredCall, error) bool) (int64, bool) {
	st, err := sqlgen.CallsSelect(sqlgen.DuckDB{}, q, opts...)
	if err != nil {
		yield(storage.StoredCall{}, err)
		return 0, false
	}
	rows, err := db.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		yield(storage.StoredCall{}, fmt.Errorf("query calls: %w", err))
		return 0, false
	}
	defer rows.Close()
	sc, err := newCallScanner(rows, s.dumps)
	if err != nil {
		yield(storage.StoredCall{}, err)
		return 0, false
	}
	var n int64
	for rows.Next() {
		c, err := sc.scan(rows)
		if !yield(c, err) || err != nil {
			return n, false
		}
		n++
	}
	if err := rows.Err(); err != nil {
		yield(storage.StoredCall{}, fmt.Errorf("query calls: %w", err))
		return n, false
	}
	return n, true
}

// CountCalls implements storage.CallReader.
func (s *Store) CountCalls(ctx context.Context, q storage.CallsQuery, limit int64) (storage.CallsStats, error) {
	if f, ok := minuteFilter(q); ok && !q.IncludeTotalStorageSize {
		n, err := s.countFromMinutes(ctx, q.ProjectID, f)
		if limit > 0 {
			n = min(n, limit)
		}
		return storage.CallsStats{Count: n}, err
	}
	return s.countByScan(ctx, q, limit)
}

// countByScan counts q's calls from the calls alone, for the filters the
// rollups do not keep.
func (s *Store) countByScan(ctx context.Context, q storage.CallsQuery, limit int64) (storage.CallsStats, error) {
	db := s.calls.guarded(s.stmts)
	st, err := sqlgen.CallsCount(sqlgen.DuckDB{}, q, limit, append(s.locate(q), s.costModels(ctx, db, q)...)...)
	if err != nil {
		return storage.CallsStats{}, err
	}
	rows, err := db.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return storage.CallsStats{}, fmt.Errorf("count calls: %w", err)
	}
	defer rows.Close()
	var out storage.CallsStats
	if !rows.Next() {
		return out, rows.Err()
	}
	cols, _ := rows.Columns()
	var total sql.NullInt64
	dest := []any{&out.Count}
	if len(cols) > 1 {
		dest = append(dest, &total)
	}
	if err := rows.Scan(dest...); err != nil {
		return out, fmt.Errorf("count calls: %w", err)
	}
	if q.IncludeTotalStorageSize {
		v := total.Int64
		out.TotalStorageSizeBytes = &v
	}
	return out, nil
}

// locate narrows a read by call ids, or else by trace ids, to the start
// times the locator knows for them; nothing when it cannot.
func (s *Store) locate(q storage.CallsQuery) []sqlgen.CallsOption {
	if s.located == nil { // read benchmarks compare with a scan
		return nil
	}
	ids, traces := q.Filter.CallIDs, false
	if len(ids) == 0 {
		ids, traces = q.Filter.TraceIDs, true
	}
	ranges, ok := s.located.startedWithin(q.ProjectID, ids, traces)
	if !ok {
		return nil
	}
	return []sqlgen.CallsOption{sqlgen.StartedWithin(widen(ranges))}
}
