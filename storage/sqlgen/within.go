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
// the engine skip the rest of the table by its per-block time bounds.
func StartedWithin(ranges []TimeRange) CallsOption {
	return func(p *callsPlan) {
		if len(ranges) == 0 {
			p.where = append(p.where, sqlNullBool)
			return
		}
		ors := make([]string, len(ranges))
		for i, r := range ranges {
			ors[i] = "c.started_at BETWEEN " + p.b.bind(r.From.UTC(), TypeTime) + " AND " + p.b.bind(r.To.UTC(), TypeTime)
		}
		p.where = append(p.where, "("+strings.Join(ors, " OR ")+")")
	}
}
