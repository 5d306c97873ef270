package traceapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// runReadRes is EvaluationRunReadRes.
type runReadRes struct {
	EvaluationRunID string          `json:"evaluation_run_id"`
	Evaluation      string          `json:"evaluation"`
	Model           string          `json:"model"`
	Status          string          `json:"status"`
	StartedAt       *wire.Time      `json:"started_at"`
	FinishedAt      *wire.Time      `json:"finished_at"`
	Summary         json.RawMessage `json:"summary"`
}

// runInputs are the inputs of a run's call, as Evaluation.evaluate's are.
type runInputs struct {
	Self  string `json:"self"`
	Model string `json:"model"`
}

// isRun reports whether a call is an evaluation run: one this API
// created, or an Evaluation.evaluate call the SDK traced.
func isRun(c storage.Call) bool {
	return marksOf(c)["evaluation_run"] == marked || opIs(c.OpName, evaluateOp)
}

// runRes renders a run's call. The evaluation and model refs come from
// the marker attributes, or from the inputs of a call the SDK traced.
func runRes(sc storage.StoredCall) any {
	c, m := sc.Call, marksOf(sc.Call)
	evaluation := firstNonEmpty(m["evaluation"], inputString(c, "self"), inputString(c, "this"))
	res := runReadRes{EvaluationRunID: c.ID, Evaluation: evaluation,
		Model: firstNonEmpty(m["model"], inputString(c, "model")), Status: callStatus(c),
		Summary: wire.NewCallSchema(sc, wire.Extras{}).Summary}
	if !c.StartedAt.IsZero() {
		res.StartedAt = &wire.Time{Time: c.StartedAt}
	}
	if c.EndedAt != nil {
		res.FinishedAt = &wire.Time{Time: *c.EndedAt}
	}
	return res
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// runCreate starts an Evaluation.evaluate call, the root of its own
// trace, marked as a run; it runs until finished.
func (a *EvaluationRunsAPI) runCreate(r *http.Request, body []byte) (any, error) {
	var evaluation, model string
	err := wire.DecodeTop(body, wire.Fields{"evaluation": &evaluation, "model": &model}, "evaluation", "model")
	if err != nil {
		return nil, err
	}
	projectID, p, err := pathProject(r, auth.Write)
	if err != nil {
		return nil, err
	}
	op, err := a.opRef(r.Context(), projectID, p.UserID, evaluateOp, evaluateSource)
	if err != nil {
		return nil, err
	}
	id := newCallID()
	start, err := startOp(projectID, p.UserID, evalCall{id: id, traceID: id, opName: op,
		attributes: weaveAttrs(runMarks{EvaluationRun: marked, Evaluation: evaluation, Model: model}),
		inputs:     runInputs{Self: evaluation, Model: model}}, a.stamp())
	if err != nil {
		return nil, err
	}
	if _, err := a.write(r.Context(), start); err != nil {
		return nil, err
	}
	return map[string]string{"evaluation_run_id": id}, nil
}

// readRun reads the run id names; 404 when it names none.
func (a *EvaluationRunsAPI) readRun(ctx context.Context, projectID, id string) (storage.StoredCall, error) {
	c, ok, err := a.readCall(ctx, projectID, id)
	if err != nil {
		return c, err
	}
	if !ok || !isRun(c.Call) {
		return c, notFound("Evaluation run", id)
	}
	return c, nil
}

func (a *EvaluationRunsAPI) runRead(r *http.Request, _ []byte) (any, error) {
	id, err := pathID(r, "evaluation_run_id")
	if err != nil {
		return nil, err
	}
	projectID, _, err := pathProject(r, auth.Read)
	if err != nil {
		return nil, err
	}
	c, err := a.readRun(r.Context(), projectID, id)
	if err != nil {
		return nil, err
	}
	return runRes(c), nil
}

// runQuery lists the calls marked as runs, narrowed by the evaluations,
// models and evaluation_run_ids parameters (each repeated, or comma
// separated; evaluation_refs and model_refs are the Python SDK's names
// for the first two).
func (a *EvaluationRunsAPI) runQuery(r *http.Request) (storage.CallsQuery, error) {
	var q storage.CallsQuery
	where := []querylang.Expr{markIs("evaluation_run", marked)}
	for _, f := range []struct{ param, alias, attr string }{
		{"evaluations", "evaluation_refs", "evaluation"}, {"models", "model_refs", "model"},
	} {
		vals := append(queryList(r, f.param), queryList(r, f.alias)...)
		if err := checkFilterLen(f.param, vals); err != nil {
			return q, err
		}
		if len(vals) > 0 {
			in := &querylang.In{Operand: &querylang.GetField{Path: markPath(f.attr)}}
			for _, v := range vals {
				in.List = append(in.List, &querylang.Literal{Value: v})
			}
			where = append(where, in)
		}
	}
	ids := queryList(r, "evaluation_run_ids")
	if err := checkFilterLen("evaluation_run_ids", ids); err != nil {
		return q, err
	}
	for i, id := range ids {
		if err := wire.CheckID(fmt.Sprintf("evaluation_run_ids[%d]", i), id); err != nil {
			return q, err
		}
	}
	q.Filter.CallIDs = ids
	q.Where = &querylang.And{Operands: where}
	return q, nil
}

// markIs is the condition attributes.weave.<key> == value.
func markIs(key, value string) querylang.Expr {
	return &querylang.Compare{Op: querylang.OpEq, Left: &querylang.GetField{Path: markPath(key)},
		Right: &querylang.Literal{Value: value}}
}

func checkFilterLen(param string, vals []string) error {
	if len(vals) > MaxEvalFilterValues {
		return &wire.FieldError{Field: param, Msg: fmt.Sprintf("has %d values, at most %d", len(vals), MaxEvalFilterValues)}
	}
	return nil
}

func (a *EvaluationRunsAPI) runDelete(r *http.Request, _ []byte) (any, error) {
	return a.deleteCalls(r, "evaluation_run_ids")
}

// summarizeInputs are the inputs of a run's Evaluation.summarize call.
type summarizeInputs struct {
	Self json.RawMessage `json:"self"`
}

// runFinish ends a run as Evaluation.evaluate ends: a child
// Evaluation.summarize call and the run itself both get the means of its
// rows' scores and outputs as output; the run's summary is the one sent.
func (a *EvaluationRunsAPI) runFinish(r *http.Request, body []byte) (any, error) {
	id, err := pathID(r, "evaluation_run_id")
	if err != nil {
		return nil, err
	}
	var summary json.RawMessage
	if len(bytes.TrimSpace(body)) > 0 {
		if err := wire.DecodeTop(body, wire.Fields{"summary": &summary}); err != nil {
			return nil, err
		}
	}
	if err := wire.MustBeObject("summary", summary); err != nil {
		return nil, err
	}
	projectID, p, err := pathProject(r, auth.Write)
	if err != nil {
		return nil, err
	}
	run, err := a.readRun(r.Context(), projectID, id)
	if err != nil {
		return nil, err
	}
	output, err := a.runOutput(r.Context(), projectID, id)
	if err != nil {
		return nil, err
	}
	now := a.stamp()
	summarize, err := completeOp(projectID, p.UserID, evalCall{id: newCallID(), traceID: run.TraceID, parentID: id,
		opName: summarizeOp, attributes: map[string]any{}, inputs: summarizeInputs{Self: inputValue(run.Call, "self")}},
		now, now, output)
	if err != nil {
		return nil, err
	}
	end, err := endOp(projectID, id, now, output, summary)
	if err != nil {
		return nil, err
	}
	if _, err := a.write(r.Context(), summarize, end); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

// mean accumulates one column of a run's rows.
type mean struct {
	sum float64
	n   int
}

func (m *mean) add(f float64) { m.sum, m.n = m.sum+f, m.n+1 }

// runOutput is a finished run's output: for each scorer (in the order its
// first score was seen) the mean of its float scores, then the mean of
// the numeric model outputs; a column with no such values is left out.
// As in Python, a score counts only when it is a float (1.0, not 1), and
// a model output when it is a number or a boolean.
func (a *EvaluationRunsAPI) runOutput(ctx context.Context, projectID, runID string) (json.RawMessage, error) {
	var names []string
	scores := map[string]*mean{}
	var outputs mean
	q := storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{ParentIDs: []string{runID}},
		Columns: []string{"id", "op_name", "output"}}
	for c, err := range a.calls.QueryCalls(ctx, q) {
		if err != nil {
			return nil, err
		}
		if !opIs(c.OpName, predictAndScoreOp) || len(c.Output) == 0 {
			continue
		}
		v, err := decodeOrdered(c.Output)
		row, ok := v.(*jsonObject)
		if err != nil || !ok {
			continue
		}
		if out, ok := row.get("output"); ok {
			if f, ok := pyNumber(out); ok {
				outputs.add(f)
			}
		}
		byScorer, _ := row.get("scores")
		s, ok := byScorer.(*jsonObject)
		if !ok {
			continue
		}
		for _, name := range s.keys {
			if scores[name] == nil {
				scores[name] = &mean{}
				names = append(names, name)
			}
			if f, ok := pyFloatValue(s.vals[name]); ok {
				scores[name].add(f)
			}
		}
	}
	out := &jsonObject{vals: map[string]any{}}
	for _, name := range names {
		if m := scores[name]; m.n > 0 {
			out.set(name, map[string]pyFloat{"mean": pyFloat(m.sum / float64(m.n))})
		}
	}
	if outputs.n > 0 {
		out.set("output", map[string]pyFloat{"mean": pyFloat(outputs.sum / float64(outputs.n))})
	}
	return marshalJSON(out)
}

// pyFloatValue is v (decoded by decodeOrdered) as a float when Python's
// json would decode it to one: a number written with a fraction or an
// exponent.
func pyFloatValue(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok || !bytes.ContainsAny([]byte(n), ".eE") {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// pyNumber is v as a number when Python counts it as an int or a float,
// booleans included.
func pyNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case bool:
		if n {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// pyFloat encodes as Python's json.dumps writes a float (1.0, not 1), as
// the reference stores the floats it computes.
type pyFloat float64

// MarshalJSON implements json.Marshaler.
func (f pyFloat) MarshalJSON() ([]byte, error) {
	return digest.AppendPyFloat(nil, float64(f)), nil
}
