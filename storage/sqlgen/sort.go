package sqlgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// orderKey is one ORDER BY key; NULLs sort last in both directions.
type orderKey struct {
	sql  string
	desc bool
	// bounded: sql is a stored column, so a page sorted first by it can
	// be cut to the rows on the page's side of a bound (SortBound) by a
	// predicate the engine applies while it scans.
	bounded bool
	// boundType is the column's type, which the bound is bound as: a
	// BIGINT column compared with a DOUBLE is cast row by row, and the
	// engine then skips nothing by it (the bounded latency keys took 200
	// ms on 39M calls against 47 ms unbounded).
	boundType Type
}

func (k orderKey) render(expr string) string {
	if k.desc {
		return expr + " DESC NULLS LAST"
	}
	return expr + " ASC NULLS LAST"
}

// parseDirection accepts asc and desc in any case.
func parseDirection(i int, dir string) (bool, error) {
	switch strings.ToLower(dir) {
	case "asc":
		return false, nil
	case "desc":
		return true, nil
	}
	return false, fmt.Errorf("sort_by[%d].direction %q is not a direction; use \"asc\" or \"desc\": %w",
		i, dir, storage.ErrInvalidArgument)
}

// callSortTerms applies the calls defaults: nil sorts by started_at then
// id; other lists get an id tiebreaker unless they sort by id already,
// ascending after an ascending started_at and descending otherwise.
func callSortTerms(sortBy []storage.SortBy) []storage.SortBy {
	if sortBy == nil {
		return []storage.SortBy{{Field: "started_at", Direction: "asc"}, {Field: "id", Direction: "asc"}}
	}
	if len(sortBy) == 0 || slices.ContainsFunc(sortBy, func(s storage.SortBy) bool { return s.Field == "id" }) {
		return sortBy
	}
	tie := storage.SortBy{Field: "id", Direction: "desc"}
	if last := sortBy[len(sortBy)-1]; last.Field == "started_at" {
		tie.Direction = last.Direction
	}
	return append(slices.Clone(sortBy), tie)
}

// callOrderKeys validates and renders the sort of a calls query. Dynamic
// and feedback fields sort by three keys: present first, then as a number,
// then as a string.
func callOrderKeys(fs *fields, sortBy []storage.SortBy) ([]orderKey, error) {
	for i, s := range sortBy {
		if _, err := parseDirection(i, s.Direction); err != nil {
			return nil, err
		}
		if _, err := lookupField(s.Field); err != nil {
			return nil, fmt.Errorf("sort_by[%d].field: %w", i, err)
		}
	}
	var keys []orderKey
	for i, s := range callSortTerms(sortBy) {
		desc, err := parseDirection(i, s.Direction)
		if err != nil {
			return nil, err
		}
		f, _ := lookupField(s.Field)
		value := fs.value(f)
		if f.kind == fieldJSON || f.kind == fieldFeedback {
			keys = append(keys, orderKey{sql: fs.exists(f), desc: true},
				orderKey{sql: fs.d.ParseFloat(value), desc: desc})
		}
		boundType, bounded := storedSortKey(fs.d, f)
		keys = append(keys, orderKey{sql: value, desc: desc, bounded: bounded, boundType: boundType})
	}
	return keys, nil
}

// storedSortKey reports whether the dialect keeps the field, a computed
// one, in a column of its own, which SortBound can bound a page by, and
// the column's type.
func storedSortKey(d Dialect, f fieldInfo) (Type, bool) {
	if f.kind != fieldComputed {
		return 0, false
	}
	switch f.name {
	case "latency_ms":
		_, ok := d.(StoredLatencyDialect)
		return TypeInt, ok
	case "total_tokens":
		_, ok := d.(StoredTokensDialect)
		return TypeFloat, ok
	}
	return 0, false
}
