package traceapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// sortByDigest puts rows in row digest order, the order without sort_by.
func sortByDigest(rows []*evalResultsRow) {
	slices.SortFunc(rows, func(a, b *evalResultsRow) int { return strings.Compare(a.RowDigest, b.RowDigest) })
}

// sortEvalRows orders rows by the terms, rows without a value last in
// either direction, ties in row digest order.
func sortEvalRows(rows []*evalResultsRow, terms []evalSort, evalIDs []string) {
	if len(terms) == 0 {
		return
	}
	keys := make(map[*evalResultsRow][]any, len(rows))
	for _, row := range rows {
		k := make([]any, len(terms))
		for i, t := range terms {
			k[i] = sortValue(row, t, evalIDs)
		}
		keys[row] = k
	}
	slices.SortStableFunc(rows, func(a, b *evalResultsRow) int {
		ka, kb := keys[a], keys[b]
		for i, t := range terms {
			va, vb := ka[i], kb[i]
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil:
				return 1
			case vb == nil:
				return -1
			}
			c, ok := compareValues(va, vb)
			if !ok {
				c = cmp.Compare(kindRank(va), kindRank(vb))
			}
			if c != 0 {
				if t.desc {
					return -c
				}
				return c
			}
		}
		return strings.Compare(a.RowDigest, b.RowDigest)
	})
}

func kindRank(v any) int {
	switch v.(type) {
	case float64, bool:
		return 0
	case string:
		return 1
	}
	return 2
}

// sortValue is a row's key for one term: the value in the term's
// evaluation (or the first compared one holding it), or the spread of a
// score across the evaluations.
func sortValue(row *evalResultsRow, t evalSort, evalIDs []string) any {
	if t.difference {
		lo, hi, n := 0.0, 0.0, 0
		for _, id := range evalIDs {
			if v, ok := evalValue(row, id, t).(float64); ok {
				if n == 0 || v < lo {
					lo = v
				}
				if n == 0 || v > hi {
					hi = v
				}
				n++
			}
		}
		if n < 2 {
			return nil
		}
		return hi - lo
	}
	if t.evalID != "" {
		return evalValue(row, t.evalID, t)
	}
	for _, id := range evalIDs {
		if v := evalValue(row, id, t); v != nil {
			return v
		}
	}
	return nil
}

// evalValue is a field's value in one evaluation of a row: a score's
// mean over the trials (booleans count 1 and 0), any other field its
// first trial's value.
func evalValue(row *evalResultsRow, evalID string, t evalSort) any {
	docs := row.docs(evalID)
	if t.path[0].Key == "scores" {
		sum, n := 0.0, 0
		for _, d := range docs {
			if f, ok := number(d.get(t.path)); ok {
				sum += f
				n++
			}
		}
		if n > 0 {
			return sum / float64(n)
		}
	}
	for _, d := range docs {
		switch v := d.get(t.path).(type) {
		case nil, map[string]any, []any:
		default:
			return v
		}
	}
	return nil
}

// resolveRows replaces dataset row refs in the page's raw_data_row with
// the rows, read through the refs reader as /refs/read_batch reads them.
// A failure leaves the refs and says so in a warning, as the reference.
func (a *EvalResultsAPI) resolveRows(ctx context.Context, projectID string, canRead func(string) bool, rows []*evalResultsRow) []string {
	var refs []string
	var targets []*evalResultsRow
	for _, row := range rows {
		var s string
		if json.Unmarshal(row.RawDataRow, &s) != nil || !strings.Contains(s, rowRefMarker) {
			continue
		}
		if !strings.HasPrefix(s, "weave:///") {
			s = "weave:///" + projectID + "/object/" + s
		}
		refs, targets = append(refs, s), append(targets, row)
	}
	for start := 0; start < len(refs); start += storage.MaxRefsPerReadBatch {
		end := min(start+storage.MaxRefsPerReadBatch, len(refs))
		vals, err := a.refs.ReadRefs(ctx, canRead, refs[start:end])
		if err != nil {
			a.logger.WarnContext(ctx, "resolving dataset row refs failed; the rows are answered with their refs unresolved; if it repeats, check the store", "project_id", projectID, "error", err)
			return []string{"Failed to resolve dataset row refs; raw_data_row may contain refs"}
		}
		for i, v := range vals {
			if len(v) > 0 && !bytes.Equal(v, []byte("null")) {
				targets[start+i].RawDataRow = v
			}
		}
	}
	return []string{}
}
