package sqlgen

import (
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// A stream of calls read in one snapshot, page after page, in start-time
// order: each page found from the keys of the last call of the page
// before, not by an OFFSET that sorts every earlier call again for each
// page (on 3M calls, 0.56 s per page of 10,000 and growing with the
// offset).

// KeysetOrder reports whether sortBy orders calls by start time and then
// id, both ascending or both descending (desc), the order StartedAfter
// pages: the default order and a sort by started_at alone.
func KeysetOrder(sortBy []storage.SortBy) (desc, ok bool) {
	terms := callSortTerms(sortBy)
	if len(terms) != 2 || terms[0].Field != "started_at" || terms[1].Field != "id" ||
		!strings.EqualFold(terms[0].Direction, terms[1].Direction) {
		return false, false
	}
	desc = strings.EqualFold(terms[0].Direction, "desc")
	return desc, desc || strings.EqualFold(terms[0].Direction, "asc")
}

// StartedAfter narrows a query in KeysetOrder to the calls after the one
// that started at started with id id. Calls without a start time, which
// sort last, are never after it (StartedUnknown reads them). The plain
// bound on started_at beside the exact one lets the engine skip the
// blocks before it.
func StartedAfter(started time.Time, id string, desc bool) CallsOption {
	return func(p *callsPlan) {
		cmp, weak := " > ", " >= "
		if desc {
			cmp, weak = " < ", " <= "
		}
		t, i := p.b.bind(started.UTC(), TypeTime), p.b.bind(id, TypeString)
		p.where = append(p.where, "c.started_at"+weak+t,
			"(c.started_at"+cmp+t+" OR (c.started_at = "+t+" AND c.id"+cmp+i+"))")
	}
}

// StartedUnknown narrows a calls query to the calls without a start time.
func StartedUnknown() CallsOption {
	return func(p *callsPlan) { p.where = append(p.where, "c.started_at IS NULL") }
}

// StartedBefore narrows a query in KeysetOrder to the calls that come
// before start time edge in its order (earlier ascending, later
// descending), so that a page reads the calls of a window of time rather
// than every call after its first.
func StartedBefore(edge time.Time, desc bool) CallsOption {
	return func(p *callsPlan) {
		cmp := " < "
		if desc {
			cmp = " > "
		}
		p.where = append(p.where, "c.started_at"+cmp+p.b.bind(edge.UTC(), TypeTime))
	}
}

// StartedSpan renders the earliest and latest start time of a project's
// live calls, the range a stream in KeysetOrder walks.
func StartedSpan(d Dialect, projectID string) Statement {
	b := newBuilder(d)
	return Statement{SQL: "SELECT min(c.started_at), max(c.started_at) FROM calls c WHERE c.project_id = " + b.bind(projectID, TypeString) +
		" AND c.has_start AND c.deleted_at IS NULL", Args: b.args}
}
