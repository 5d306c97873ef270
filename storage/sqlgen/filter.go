package sqlgen

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
)

// MaxFilterList is the most entries a CallsFilter list may hold.
const MaxFilterList = 1000

// wildcardSuffix marks op names and refs that match every version:
// "weave:///e/p/op/name:*" matches "weave:///e/p/op/name:<any digest>".
const wildcardSuffix = ":*"

// validateFilter checks list lengths before anything is rendered.
func validateFilter(f storage.CallsFilter) error {
	lists := []struct {
		name string
		vals []string
	}{
		{"op_names", f.OpNames}, {"input_refs", f.InputRefs}, {"output_refs", f.OutputRefs},
		{"parent_ids", f.ParentIDs}, {"trace_ids", f.TraceIDs}, {"call_ids", f.CallIDs},
		{"thread_ids", f.ThreadIDs}, {"turn_ids", f.TurnIDs},
		{"wb_user_ids", f.WBUserIDs}, {"wb_run_ids", f.WBRunIDs},
	}
	for _, l := range lists {
		if len(l.vals) > MaxFilterList {
			return fmt.Errorf("filter.%s has %d entries; send at most %d per request: %w",
				l.name, len(l.vals), MaxFilterList, storage.ErrInvalidArgument)
		}
	}
	return nil
}

// filterPredicates renders a CallsFilter over the calls table aliased a.
// All predicates compare plain columns, so the engine can prune with them
// before any JSON is read.
func filterPredicates(b *builder, a, projectID string, f storage.CallsFilter) []string {
	var preds []string
	add := func(p string) {
		if p != "" {
			preds = append(preds, p)
		}
	}
	add(opNamePredicate(b, a+".op_name", f.OpNames))
	add(refsPredicate(b, b.d.StoredList(a+".input_refs"), f.InputRefs))
	add(refsPredicate(b, b.d.StoredList(a+".output_refs"), f.OutputRefs))
	add(inList(b, a+".parent_id", f.ParentIDs))
	add(inList(b, a+".trace_id", f.TraceIDs))
	add(inList(b, a+".id", f.CallIDs))
	if f.ThreadIDs != nil {
		add(inListOrFalse(b, a+".thread_id", f.ThreadIDs))
	}
	if f.TurnIDs != nil {
		add(inListOrFalse(b, a+".turn_id", f.TurnIDs))
	}
	if f.TraceRootsOnly {
		add(isRoot(a))
	}
	add(inList(b, a+".wb_user_id", f.WBUserIDs))
	add(inList(b, a+".wb_run_id", qualifyRunIDs(projectID, f.WBRunIDs)))
	return preds
}

// isRoot matches calls without a parent: a NULL or empty parent_id.
func isRoot(a string) string {
	return "(" + a + ".parent_id IS NULL OR " + a + ".parent_id = '')"
}

func bindAll(b *builder, vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = b.bind(v, TypeString)
	}
	return out
}

func inList(b *builder, col string, vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	return col + " IN (" + sqlList(bindAll(b, vals)) + ")"
}

// inListOrFalse is for thread_ids and turn_ids, where an empty list
// matches nothing.
func inListOrFalse(b *builder, col string, vals []string) string {
	if len(vals) == 0 {
		return "FALSE"
	}
	return inList(b, col, vals)
}

// splitWildcards separates exact values from ":*" wildcards, turning each
// wildcard into the prefix it matches (up to and including the ':').
func splitWildcards(vals []string) (exact, prefixes []string) {
	for _, v := range vals {
		if p, ok := strings.CutSuffix(v, wildcardSuffix); ok {
			prefixes = append(prefixes, p+":")
		} else {
			exact = append(exact, v)
		}
	}
	return exact, prefixes
}

func opNamePredicate(b *builder, col string, names []string) string {
	exact, prefixes := splitWildcards(names)
	var alts []string
	if len(exact) > 0 {
		alts = append(alts, inList(b, col, exact))
	}
	for _, p := range prefixes {
		alts = append(alts, b.d.StartsWith(col, b.bind(p, TypeString)))
	}
	return anyOf(alts)
}

func refsPredicate(b *builder, col string, refs []string) string {
	exact, prefixes := splitWildcards(refs)
	var alts []string
	if len(exact) > 0 {
		alts = append(alts, b.d.ListHasAny(col, bindAll(b, exact)))
	}
	for _, p := range prefixes {
		alts = append(alts, b.d.ListHasPrefix(col, b.bind(p, TypeString)))
	}
	return anyOf(alts)
}

func anyOf(alts []string) string {
	switch len(alts) {
	case 0:
		return ""
	case 1:
		return alts[0]
	}
	return "(" + strings.Join(alts, " OR ") + ")"
}

// qualifyRunIDs accepts "entity/project/run" and bare run ids; a bare id
// also matches the run qualified to the queried project.
func qualifyRunIDs(projectID string, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, id)
		if !strings.Contains(id, "/") {
			out = append(out, projectID+"/"+id)
		}
	}
	return out
}
