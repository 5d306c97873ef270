package traceapi

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// The field prefixes a comparison sorts and filters by: a trial's scores,
// the dataset row and the model's output.
const (
	scoresPrefix  = "scores."
	inputsPrefix  = "inputs."
	outputPrefix  = "output."
	outputsPrefix = "outputs."
)

// evalSort is one checked EvalResultsSortBy term.
type evalSort struct {
	path       []querylang.Segment // the field, its prefix first
	desc       bool
	evalID     string // "" = the first compared evaluation holding a value
	difference bool   // the spread of the value across evaluations
}

// evalFilter is one checked EvalResultsFilter.
type evalFilter struct {
	evalID string // "" = every evaluation of the row, combined by the operator
	expr   querylang.Expr
}

func hasFieldPrefix(field string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(field, p) && len(field) > len(p) {
			return true
		}
	}
	return false
}

func parseEvalSorts(in []evalSortWire) ([]evalSort, error) {
	if len(in) > MaxEvalResultsTerms {
		return nil, &wire.FieldError{Field: "sort_by", Msg: fmt.Sprintf("has %d terms; at most %d", len(in), MaxEvalResultsTerms)}
	}
	out := make([]evalSort, 0, len(in))
	for i, s := range in {
		loc := fmt.Sprintf("sort_by[%d]", i)
		if !hasFieldPrefix(s.Field, scoresPrefix, inputsPrefix, outputPrefix, outputsPrefix) {
			return nil, &wire.FieldError{Field: loc + ".field", Msg: fmt.Sprintf("unsupported sort field %q; sort by scores.<name>, inputs.<path> or output.<path>", s.Field)}
		}
		t := evalSort{path: querylang.SplitPath(s.Field)}
		switch strings.ToLower(s.Direction) {
		case "", "asc":
		case "desc":
			t.desc = true
		default:
			return nil, &wire.FieldError{Field: loc + ".direction", Msg: fmt.Sprintf("%q is not one of \"asc\", \"desc\"", s.Direction)}
		}
		switch s.Mode {
		case "", "value":
		case "difference":
			if !strings.HasPrefix(s.Field, scoresPrefix) {
				return nil, &wire.FieldError{Field: loc + ".mode", Msg: fmt.Sprintf("\"difference\" sorts numeric fields (scores.*) only, not %q", s.Field)}
			}
			t.difference = true
		default:
			return nil, &wire.FieldError{Field: loc + ".mode", Msg: fmt.Sprintf("%q is not one of \"value\", \"difference\"", s.Mode)}
		}
		if s.EvaluationCallID != nil {
			t.evalID = *s.EvaluationCallID
		}
		out = append(out, t)
	}
	return out, nil
}

func parseEvalFilters(lim querylang.Limits, in []evalFilterWire) ([]evalFilter, error) {
	if len(in) > MaxEvalResultsTerms {
		return nil, &wire.FieldError{Field: "filters", Msg: fmt.Sprintf("has %d filters; at most %d", len(in), MaxEvalResultsTerms)}
	}
	out := make([]evalFilter, 0, len(in))
	for i, f := range in {
		loc := fmt.Sprintf("filters[%d].query", i)
		expr, err := lim.Parse(f.Query)
		if err != nil {
			return nil, &wire.FieldError{Field: loc, Msg: err.Error()}
		}
		if expr == nil {
			return nil, wire.Missing(loc, `: a query {"$expr": <operation>}`)
		}
		for _, field := range querylang.Fields(expr) {
			if field != "output" && field != "outputs" && !hasFieldPrefix(field, scoresPrefix, inputsPrefix, outputPrefix, outputsPrefix) {
				return nil, &wire.FieldError{Field: loc, Msg: fmt.Sprintf("unsupported field %q; filter by scores.<name>, inputs.<path> or outputs.<path>", field)}
			}
		}
		ef := evalFilter{expr: expr}
		if f.EvaluationCallID != nil {
			ef.evalID = *f.EvaluationCallID
		}
		out = append(out, ef)
	}
	return out, nil
}

// trialDoc is what a field of a filter or sort reads for one trial.
type trialDoc struct {
	scores map[string]any
	inputs any
	output any
}

func (d trialDoc) get(path []querylang.Segment) any {
	if len(path) == 0 {
		return nil
	}
	var v any
	switch path[0].Key {
	case "scores":
		v = d.scores
	case "inputs":
		v = d.inputs
	case "output", "outputs":
		v = d.output
	default:
		return nil
	}
	for _, seg := range path[1:] {
		switch c := v.(type) {
		case map[string]any:
			v = c[seg.Key]
		case []any:
			if !seg.IsIndex || seg.Index >= len(c) {
				return nil
			}
			v = c[seg.Index]
		default:
			return nil
		}
	}
	return v
}

func jsonValue(raw json.RawMessage) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// docs are the row's trials of one evaluation as filter documents.
func (row *evalResultsRow) docs(evalID string) []trialDoc {
	ev := row.byEval[evalID]
	if ev == nil {
		return nil
	}
	inputs := jsonValue(row.example)
	out := make([]trialDoc, 0, len(ev.Trials))
	for _, t := range ev.Trials {
		scores := make(map[string]any, len(t.Scores))
		for k, v := range t.Scores {
			scores[k] = jsonValue(v)
		}
		out = append(out, trialDoc{scores: scores, inputs: inputs, output: jsonValue(t.ModelOutput)})
	}
	return out
}

// filterEvalRows keeps the rows every filter matches. A filter scoped to
// an evaluation matches when one of its trials does; an unscoped one is
// tried on each evaluation of the row, which must all match (matchAll) or
// any one.
func filterEvalRows(rows []*evalResultsRow, filters []evalFilter, matchAll bool) []*evalResultsRow {
	out := make([]*evalResultsRow, 0, len(rows))
	for _, row := range rows {
		if rowMatches(row, filters, matchAll) {
			out = append(out, row)
		}
	}
	return out
}

func rowMatches(row *evalResultsRow, filters []evalFilter, matchAll bool) bool {
	for _, f := range filters {
		if f.evalID != "" {
			if !evalMatches(row, f.evalID, f.expr) {
				return false
			}
			continue
		}
		any, all := false, len(row.Evaluations) > 0
		for _, ev := range row.Evaluations {
			if evalMatches(row, ev.EvaluationCallID, f.expr) {
				any = true
			} else {
				all = false
			}
		}
		if (matchAll && !all) || (!matchAll && !any) {
			return false
		}
	}
	return true
}

func evalMatches(row *evalResultsRow, evalID string, expr querylang.Expr) bool {
	for _, d := range row.docs(evalID) {
		if truth(expr, d) {
			return true
		}
	}
	return false
}

// truth evaluates an operation on a trial.
func truth(e querylang.Expr, d trialDoc) bool {
	switch e := e.(type) {
	case *querylang.And:
		for _, o := range e.Operands {
			if !truth(o, d) {
				return false
			}
		}
		return true
	case *querylang.Or:
		return slices.ContainsFunc(e.Operands, func(o querylang.Expr) bool { return truth(o, d) })
	case *querylang.Not:
		return !truth(e.Operand, d)
	case *querylang.Compare:
		l, r := operand(e.Left, d), operand(e.Right, d)
		if l == nil || r == nil {
			return false
		}
		c, ok := compareValues(l, r)
		if !ok {
			return false
		}
		switch e.Op {
		case querylang.OpEq:
			return c == 0
		case querylang.OpGt:
			return c > 0
		case querylang.OpGte:
			return c >= 0
		case querylang.OpLt:
			return c < 0
		case querylang.OpLte:
			return c <= 0
		}
	case *querylang.In:
		v := operand(e.Operand, d)
		return slices.ContainsFunc(e.List, func(o querylang.Expr) bool {
			c, ok := compareValues(v, operand(o, d))
			return ok && c == 0
		})
	case *querylang.Contains:
		return containsText(operand(e.Input, d), operand(e.Substr, d), e.CaseInsensitive)
	case *querylang.ContainsToken:
		return containsText(operand(e.Input, d), operand(e.Substr, d), e.CaseInsensitive)
	default:
		if querylang.IsOperation(e) {
			return false
		}
		return truthy(operand(e, d))
	}
	return false
}

func containsText(in, sub any, fold bool) bool {
	s, ok1 := in.(string)
	t, ok2 := sub.(string)
	if !ok1 || !ok2 {
		return false
	}
	if fold {
		s, t = strings.ToLower(s), strings.ToLower(t)
	}
	return strings.Contains(s, t)
}

// operand is an operand's value on a trial: JSON-decoded (numbers are
// float64), nil when absent.
func operand(e querylang.Expr, d trialDoc) any {
	switch e := e.(type) {
	case *querylang.Literal:
		switch v := e.Value.(type) {
		case int64:
			return float64(v)
		}
		return e.Value
	case *querylang.GetField:
		return d.get(querylang.SplitPath(e.Path))
	case *querylang.Convert:
		return convert(operand(e.Input, d), e.To)
	default:
		return truth(e, d)
	}
}

func convert(v any, to querylang.CastType) any {
	switch to {
	case querylang.CastExists:
		return v != nil
	case querylang.CastDouble, querylang.CastInt:
		f, ok := number(v)
		if !ok {
			return nil
		}
		if to == querylang.CastInt {
			f = math.Trunc(f)
		}
		return f
	case querylang.CastBool:
		return truthy(v)
	case querylang.CastString:
		switch v := v.(type) {
		case nil:
			return nil
		case string:
			return v
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	return v
}

// number reads a value as a number: booleans count 1 and 0, numeric
// strings their value.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case string:
		var f float64
		if _, err := fmt.Sscan(v, &f); err == nil {
			return f, true
		}
	}
	return 0, false
}

// compareValues orders two scalars of one kind; numbers and booleans
// compare as numbers, a number and a numeric string as numbers.
func compareValues(a, b any) (int, bool) {
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strings.Compare(as, bs), true
		}
	}
	af, ok1 := number(a)
	bf, ok2 := number(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case af < bf:
		return -1, true
	case af > bf:
		return 1, true
	}
	return 0, true
}
