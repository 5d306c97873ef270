package sqlgen

import (
	"strings"
	"time"
)

// TimeRange is a closed range of start times.
type TimeRange struct{ From, To time.Time }

// CallsOption adjusts how a calls query is rendered, without changing
// what it answers.
type CallsOption func(*callsPlan)

// StartedWithin narrows a calls query to calls that started within one of
// ranges. A backend passes it when it knows, from an index of its own,
// that every call the query can match started there: the predicate lets
// the engine skip the rest of the table by its per-block time bounds, in
// both phases of a select (joining the page back by row id is otherwise a
// scan of the whole table).
func StartedWithin(ranges []TimeRange) CallsOption {
	return func(p *callsPlan) {
		p.narrow = sqlNullBool
		if len(ranges) > 0 {
			ors := make([]string, len(ranges))
			for i, r := range ranges {
				ors[i] = "c.started_at BETWEEN " + p.b.bind(r.From.UTC(), TypeTime) + " AND " + p.b.bind(r.To.UTC(), TypeTime)
			}
			p.narrow = "(" + strings.Join(ors, " OR ") + ")"
		}
		p.where = append(p.where, p.narrow)
	}
}
