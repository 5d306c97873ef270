package sqlgen

import (
	"github.com/weftdev/weft/storage"
)

// A page sorted first by a stored integer column (a bounded orderKey: the
// latency a StoredLatencyDialect keeps) is found in two statements. The
// first, CallsSortBound, reads only that column of the matching calls and
// returns the key of the page's last row. The second is the page's own
// statement with SortBound: a predicate on the column that the engine
// applies while it scans, so the other columns the sort carries (the id
// that breaks ties, the start time) are read only for the few rows on the
// page's side of the bound, not for every matching call. On 3M OTLP calls
// the first page by latency took 91-97 ms in one statement and 7-15 ms
// with the bound given (the bound itself 17-23 ms).
//
// The two statements need no common snapshot as long as the second is
// checked: a call that gains a latency in between can only move the true
// bound further in, which the predicate still admits; one deleted in
// between can leave fewer rows than the page wants, and the caller then
// reads the page again without the bound.

// CallsSortBound renders the bound for q's page: the value of q's first
// sort key at its last row (limit + offset) among the matching calls that
// have one, as one row of one BIGINT column, or no row when fewer calls
// have one. ok is false when q's page cannot be bounded: no limit, or a
// first sort key that is not a stored column. opts render it as they do
// the page.
func CallsSortBound(d Dialect, q storage.CallsQuery, opts ...CallsOption) (st Statement, ok bool, err error) {
	if q.Limit <= 0 {
		return Statement{}, false, nil
	}
	p, err := planCalls(d, q, true, opts)
	if err != nil {
		return Statement{}, false, err
	}
	if len(p.order) == 0 || !p.order[0].bounded {
		return Statement{}, false, nil
	}
	k := p.order[0]
	sql := p.withClause() + "SELECT " + k.sql + " AS bound FROM " + p.from() + " WHERE " + andAll(p.where) + " AND " + k.sql + " IS NOT NULL" +
		" ORDER BY " + k.render(k.sql) + " LIMIT 1 OFFSET " + p.b.bind(q.Limit+q.Offset-1, TypeInt)
	return Statement{SQL: sql, Args: p.b.args}, true, nil
}

// SortBound cuts a page of a query that CallsSortBound bounded to the
// calls whose first sort key lies on the page's side of bound, the value
// it returned. It changes nothing for a query it does not apply to.
func SortBound(bound float64) CallsOption {
	return func(p *callsPlan) { p.bound = &bound }
}

// boundPredicate is the predicate SortBound adds once the order is known;
// "" when it does not apply.
func (p *callsPlan) boundPredicate() string {
	if p.bound == nil || p.q.Limit <= 0 || len(p.order) == 0 || !p.order[0].bounded {
		return ""
	}
	op := " <= "
	if p.order[0].desc {
		op = " >= "
	}
	k := p.order[0]
	if k.boundType == TypeInt {
		return k.sql + op + p.b.bind(int64(*p.bound), TypeInt)
	}
	return k.sql + op + p.b.bind(*p.bound, k.boundType)
}
