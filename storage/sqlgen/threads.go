package sqlgen

import (
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
)

// ThreadColumns is the select list of ThreadsSelect, one row per thread,
// in the order of storage.Thread's fields.
var ThreadColumns = []string{
	"thread_id", "turn_count", "start_time", "last_updated",
	"first_turn_id", "last_turn_id", "p50_turn_duration_ms", "p99_turn_duration_ms",
}

// threadSortable lists the columns threads may be sorted by.
func threadSortable(field string) bool {
	return slices.Contains(ThreadColumns[:4], field) || field == "p50_turn_duration_ms" || field == "p99_turn_duration_ms"
}

// ThreadsSelect renders a threads query. Turn calls are the visible calls
// whose id is their turn_id and that carry a thread id; each thread row
// aggregates them, and threads none of whose turns has ended are skipped.
// Turn durations are milliseconds with linearly interpolated quantiles.
func ThreadsSelect(d Dialect, q storage.ThreadsQuery) (Statement, error) {
	if len(q.ThreadIDs) > MaxFilterList {
		return Statement{}, fmt.Errorf("filter.thread_ids has %d entries; send at most %d per request: %w",
			len(q.ThreadIDs), MaxFilterList, storage.ErrInvalidArgument)
	}
	order, err := threadOrder(q.SortBy)
	if err != nil {
		return Statement{}, err
	}
	b := newBuilder(d)
	where := []string{"c.project_id = " + b.bind(q.ProjectID, TypeString), "c.has_start", "c.deleted_at IS NULL",
		"c.id = c.turn_id", "c.thread_id IS NOT NULL", "c.thread_id <> ''"}
	if q.ThreadIDs != nil {
		where = append(where, inListOrFalse(b, "c.thread_id", q.ThreadIDs))
	}
	if q.AfterDatetime != nil {
		where = append(where, "c.started_at > "+b.bind(q.AfterDatetime.UTC(), TypeTime))
	}
	if q.BeforeDatetime != nil {
		where = append(where, "c.started_at < "+b.bind(q.BeforeDatetime.UTC(), TypeTime))
	}
	turns := "_turns AS (SELECT c.thread_id, c.id, c.started_at, c.ended_at, " +
		d.MillisBetween("c.started_at", "c.ended_at") + " AS dur FROM " + d.ReadCurrent(callsTable, "c") + " WHERE " + andAll(where) + ")"
	quantiles := d.Quantiles("dur", 0.5, 0.99)
	threads := "_threads AS (SELECT thread_id, count(*) AS turn_count, min(started_at) AS start_time, " +
		"max(ended_at) AS last_updated, " + d.ArgMin("id", "(started_at, id)") + " AS first_turn_id, " +
		d.ArgMax("id", "(CASE WHEN ended_at IS NOT NULL THEN (ended_at, id) END)") + " AS last_turn_id, " +
		quantiles[0] + " AS p50_turn_duration_ms, " + quantiles[1] + " AS p99_turn_duration_ms " +
		"FROM _turns GROUP BY thread_id)"
	sql := "WITH " + turns + ", " + threads + " SELECT " + sqlList(ThreadColumns) +
		" FROM _threads WHERE last_updated IS NOT NULL ORDER BY " + sqlList(order)
	if q.Limit > 0 {
		sql += " LIMIT " + b.bind(q.Limit, TypeInt)
	}
	if q.Offset > 0 {
		sql += " OFFSET " + b.bind(q.Offset, TypeInt)
	}
	return Statement{SQL: sql, Args: b.args}, nil
}

// threadOrder validates the sort and adds a thread_id tiebreaker so pages
// are stable.
func threadOrder(sortBy []storage.SortBy) ([]string, error) {
	if len(sortBy) == 0 {
		sortBy = []storage.SortBy{{Field: "last_updated", Direction: "desc"}}
	}
	var out []string
	hasID := false
	for i, s := range sortBy {
		if !threadSortable(s.Field) {
			return nil, fmt.Errorf("sort_by[%d].field %q cannot sort threads; use thread_id, turn_count, start_time, "+
				"last_updated, p50_turn_duration_ms or p99_turn_duration_ms: %w", i, s.Field, storage.ErrInvalidArgument)
		}
		desc, err := parseDirection(i, s.Direction)
		if err != nil {
			return nil, err
		}
		hasID = hasID || s.Field == "thread_id"
		out = append(out, orderKey{desc: desc}.render(s.Field))
	}
	if !hasID {
		out = append(out, "thread_id ASC NULLS LAST")
	}
	return out, nil
}
