package sqlgen

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
)

// callsTable is the table CallsSelect and CallsCount read.
const callsTable = "calls"

// callsPlan is a calls query compiled up to its WHERE clause and order.
type callsPlan struct {
	b       *builder
	fs      *fields
	q       storage.CallsQuery
	project string   // placeholder of the project id
	where   []string // predicates over alias c, project first
	order   []orderKey
	// StartedWithin narrows the query by narrow, a predicate every
	// matching call meets that is repeated where the page is joined back,
	// or by source, the calls table cut to those rows; both empty: not
	// narrowed.
	narrow string
	source string
	// bound is SortBound's value, nil without it.
	bound *float64
}

// located reports whether StartedWithin narrowed the query.
func (p *callsPlan) located() bool { return p.narrow != "" || p.source != "" }

// rejoinFilter is what the second phase repeats of the filter where the
// page is joined back to the table: the page's rows meet it, and naming
// the few call or trace ids lets the engine fetch the heavy columns of
// the blocks that hold them instead of every block in the time range.
func (p *callsPlan) rejoinFilter() string {
	preds := []string{"c.project_id = " + p.project}
	for _, pred := range []string{inList(p.b, "c.trace_id", p.q.Filter.TraceIDs), inList(p.b, "c.id", p.q.Filter.CallIDs), p.narrow} {
		if pred != "" {
			preds = append(preds, pred)
		}
	}
	return " WHERE " + andAll(preds)
}

// planCalls validates q and compiles its filter, query and sort. Nothing
// user-supplied reaches the SQL text: every value is bound.
func planCalls(d Dialect, q storage.CallsQuery, withOrder bool, opts []CallsOption) (*callsPlan, error) {
	expr := q.Where
	err := validateExpr(expr)
	if err != nil {
		return nil, err
	}
	if err = validateFilter(q.Filter); err != nil {
		return nil, err
	}
	b := newBuilder(d)
	p := &callsPlan{b: b, fs: newFields(b, "c"), q: q, project: b.bind(q.ProjectID, TypeString)}
	p.fs.prices = q.Prices
	p.where = append([]string{"c.project_id = " + p.project, "c.has_start", "c.deleted_at IS NULL"},
		filterPredicates(b, "c", q.ProjectID, q.Filter)...)
	for _, o := range opts {
		o(p)
	}
	if expr != nil {
		c := &compiler{d: d, b: b, fs: p.fs}
		pred, err := c.predicate(expr)
		if err != nil {
			return nil, err
		}
		p.where = append(p.where, pred)
	}
	if withOrder {
		if p.order, err = callOrderKeys(p.fs, q.SortBy); err != nil {
			return nil, err
		}
		if pred := p.boundPredicate(); pred != "" {
			p.where = append(p.where, pred)
		}
	}
	return p, nil
}

// from renders the FROM clause of the filtering phase, with the feedback
// joins the query and sort registered.
func (p *callsPlan) from() string {
	return p.b.d.ReadCurrent(p.table(), "c") + p.fs.feedback.joins("c")
}

// table is the calls table, or the part of it StartedWithin narrowed the
// query to.
func (p *callsPlan) table() string {
	if p.source != "" {
		return p.source
	}
	return callsTable
}

// limitClause binds LIMIT and OFFSET; zero or negative means none.
func (p *callsPlan) limitClause(limit, offset int64) string {
	var s string
	if limit > 0 {
		s += " LIMIT " + p.b.bind(limit, TypeInt)
	}
	if offset > 0 {
		s += " OFFSET " + p.b.bind(offset, TypeInt)
	}
	return s
}

// withClause renders the CTE list: feedback CTEs first, then extra.
func (p *callsPlan) withClause(extra ...string) string {
	ctes := append(p.fs.feedback.ctes(p.b, p.q.ProjectID, p.project), extra...)
	if len(ctes) == 0 {
		return ""
	}
	return "WITH " + strings.Join(ctes, ", ") + " "
}

// traceSizesCTE sums storage sizes per trace, for the traces of the root
// calls in src (a relation with columns _t and _r).
func (p *callsPlan) traceSizesCTE(src string) string {
	d := p.b.d
	return "_tss AS (SELECT t.trace_id, " + d.SumInt(storageSize(d, "t")) + " AS total FROM " + d.ReadCurrent(callsTable, "t") +
		" WHERE t.project_id = " + p.project + " AND t.has_start AND t.deleted_at IS NULL AND t.trace_id IN (SELECT _t FROM " +
		src + " WHERE _r) GROUP BY t.trace_id)"
}

// CallsCount renders a count of the calls q matches, at most limit when
// limit > 0, as one row of CountColumns. With IncludeTotalStorageSize the
// second column sums the trace sizes of the matching root calls.
func CallsCount(d Dialect, q storage.CallsQuery, limit int64, opts ...CallsOption) (Statement, error) {
	p, err := planCalls(d, q, false, opts)
	if err != nil {
		return Statement{}, err
	}
	var sql string
	if !q.IncludeTotalStorageSize {
		inner := "SELECT 1 FROM " + p.from() + " WHERE " + andAll(p.where) + p.limitClause(limit, 0)
		sql = p.withClause() + "SELECT count(*) AS count, NULL AS total_storage_size_bytes FROM (" + inner + ") _m"
	} else {
		m := "_m AS (SELECT c.trace_id AS _t, " + isRoot("c") + " AS _r FROM " + p.from() +
			" WHERE " + andAll(p.where) + p.limitClause(limit, 0) + ")"
		sql = p.withClause(m, p.traceSizesCTE("_m")) + "SELECT (SELECT count(*) FROM _m) AS count, " +
			"(SELECT coalesce(" + d.SumInt("_tss.total") + ", 0) FROM _m JOIN _tss ON _tss.trace_id = _m._t WHERE _m._r)" +
			" AS total_storage_size_bytes"
	}
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// CallsSelect renders a calls query as one statement returning
// CallColumns in the requested order. It pages in two phases: the first
// finds the page with only the columns the filter and sort need, the
// second fetches the heavy JSON columns for that page alone.
func CallsSelect(d Dialect, q storage.CallsQuery, opts ...CallsOption) (Statement, error) {
	p, err := planCalls(d, q, true, opts)
	if err != nil {
		return Statement{}, err
	}
	if p.located() && !q.IncludeTotalStorageSize {
		return p.onePass(), nil
	}
	page := []string{d.PageKey("c") + " AS _k"}
	for i, k := range p.order {
		page = append(page, fmt.Sprintf("%s AS _s%d", k.sql, i))
	}
	if q.IncludeTotalStorageSize {
		page = append(page, "c.trace_id AS _t", isRoot("c")+" AS _r")
	}
	pageSQL := "_page AS (SELECT " + sqlList(page) + " FROM " + p.from() + " WHERE " + andAll(p.where) +
		pageOrder(p.order, q) + p.limitClause(q.Limit, q.Offset) + ")"
	ctes := []string{pageSQL}
	join := ""
	if q.IncludeTotalStorageSize {
		ctes = append(ctes, p.traceSizesCTE("_page"))
		join = " LEFT JOIN _tss ON _tss.trace_id = _page._t"
	}
	sql := p.withClause(ctes...) + "SELECT " + sqlList(selectList(d, q)) + " FROM " +
		d.PageJoin("_page", p.table(), "c", p.project) + join + p.rejoinFilter() + orderBy(p.order, "_page.")
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// PageKeyColumns is the select list of CallsPageKeys.
var PageKeyColumns = []string{"id", "started_at", "page_key"}

// CallsPageKeys renders the first phase of CallsSelect on its own: the id,
// start time and page key (Dialect.PageKey) of each call of q's page, in
// page order. A backend that can fetch calls by start time cheaply
// (StartedWithin) reads a page whose calls lie scattered over the table
// this way, then fetches those calls by id within their start times,
// instead of joining the page back to every block of the table.
func CallsPageKeys(d Dialect, q storage.CallsQuery, opts ...CallsOption) (Statement, error) {
	p, err := planCalls(d, q, true, opts)
	if err != nil {
		return Statement{}, err
	}
	page := []string{"c.id AS id", "c.started_at AS started_at", d.PageKey("c") + " AS _k"}
	for i, k := range p.order {
		page = append(page, fmt.Sprintf("%s AS _s%d", k.sql, i))
	}
	sql := p.withClause() + "SELECT id, started_at, _k AS page_key FROM (SELECT " + sqlList(page) + " FROM " + p.from() +
		" WHERE " + andAll(p.where) + pageOrder(p.order, q) + p.limitClause(q.Limit, q.Offset) + ") _page" + orderBy(p.order, "_page.")
	return Statement{SQL: sql, Args: p.b.args}, nil
}

// onePass selects a read narrowed to a few ids (StartedWithin) in one
// pass: the filter names the ids, so the engine fetches the heavy columns
// of the few rows that match, and a second pass would only rescan their
// blocks and join them back.
func (p *callsPlan) onePass() Statement {
	orderSQL := ""
	if order := p.onePassOrder(); len(order) > 0 {
		orderSQL = " ORDER BY " + sqlList(order)
	}
	sql := p.withClause() + "SELECT " + sqlList(selectList(p.b.d, p.q)) + " FROM " + p.from() +
		" WHERE " + andAll(p.where) + orderSQL + p.limitClause(p.q.Limit, p.q.Offset)
	return Statement{SQL: sql, Args: p.b.args}
}

// onePassOrder is the order of a one-pass read: none for a read of one
// call id, which matches one row at most (a project holds one row per
// call). Ordering it anyway made DuckDB sort the row's heavy columns,
// and with a known limit plan a top-n joined back by row id, several
// times slower than the read itself; /call/read asks for one call with a
// limit of one.
func (p *callsPlan) onePassOrder() []string {
	if len(p.q.Filter.CallIDs) == 1 && p.q.Offset == 0 {
		return nil
	}
	order := make([]string, len(p.order))
	for i, k := range p.order {
		order[i] = k.render(k.sql)
	}
	if len(order) == 0 && (p.q.Limit > 0 || p.q.Offset > 0) {
		order = []string{p.b.d.PageKey("c")}
	}
	return order
}

// pageOrder orders the first phase. A page cut by LIMIT or OFFSET without
// sort terms is taken in page-key order, so every evaluation of the page
// (engines may run a CTE once per reference) and every request for the
// next page select the same rows.
func pageOrder(keys []orderKey, q storage.CallsQuery) string {
	if len(keys) == 0 && (q.Limit > 0 || q.Offset > 0) {
		return " ORDER BY _k"
	}
	return orderBy(keys, "")
}

// orderBy renders ORDER BY over the page's key columns (_s0, _s1, ...).
func orderBy(keys []orderKey, prefix string) string {
	if len(keys) == 0 {
		return ""
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.render(fmt.Sprintf("%s_s%d", prefix, i))
	}
	return " ORDER BY " + sqlList(parts)
}

// selectList renders CallColumns for the second phase, NULL for columns
// the projection leaves out.
func selectList(d Dialect, q storage.CallsQuery) []string {
	sel := projection(q)
	out := make([]string, len(CallColumns))
	for i, col := range CallColumns {
		switch {
		case col == "storage_size_bytes":
			out[i] = "NULL"
			if q.IncludeStorageSize {
				out[i] = storageSize(d, "c")
			}
		case col == "total_storage_size_bytes":
			out[i] = "NULL"
			if q.IncludeTotalStorageSize {
				out[i] = "(CASE WHEN _page._r THEN coalesce(_tss.total, 0) END)"
			}
		case sel != nil && !sel[col]:
			out[i] = "NULL"
		case col == "otel_dump":
			out[i] = d.RawSpanText("c")
		case isJSONColumn(col):
			out[i] = d.JSONText("c." + col)
		default:
			out[i] = "c." + col
		}
		out[i] += " AS " + col
	}
	return out
}
