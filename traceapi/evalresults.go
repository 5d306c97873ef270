package traceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// Bounds of /v2/{entity}/{project}/eval_results/query.
const (
	// MaxEvalResultsEvaluations is the most evaluations one comparison
	// names: the comparison view puts them side by side.
	MaxEvalResultsEvaluations = 20
	// MaxEvalResultsCalls is the most calls one comparison reads from the
	// evaluations' traces (roots, rows, predictions, scores and whatever
	// the model called); past it the request is refused rather than
	// answered from a part of the rows.
	MaxEvalResultsCalls = 250_000
	// MaxEvalResultsLimit is the largest page of rows one answer holds.
	MaxEvalResultsLimit = 10_000
	// MaxEvalResultsTerms bounds sort_by and filters each.
	MaxEvalResultsTerms = 10
)

// EvalResultsAPI serves the evaluation comparison: the rows of one or more
// evaluations grouped by dataset row, with each evaluation's trials and
// scores, and a summary of every score. It reads the calls the SDK's
// Evaluation.evaluate (or the v2 evaluation runs API) wrote; nothing of
// its own is stored.
type EvalResultsAPI struct {
	calls    CallReader
	refs     RefReader
	extras   CallExtras // prices for include_costs
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
}

// NewEvalResultsAPI builds the endpoint over the calls reader, the ref
// reader that resolves dataset rows, and the prices include_costs reads.
func NewEvalResultsAPI(calls CallReader, refs RefReader, extras CallExtras, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *EvalResultsAPI {
	o := applyOptions(opts)
	return &EvalResultsAPI{calls: calls, refs: refs, extras: extras, logger: logger, maxBytes: maxBodyBytes, limits: o.limits,
		budget: newReadBudget(o, logger)}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *EvalResultsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /v2/{entity}/{project}/eval_results/query",
		wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.query))))
}

// evalResultsReq is EvalResultsQueryBody, decoded and checked.
type evalResultsReq struct {
	evalIDs                    []string // call ids then run ids, deduplicated, in request order
	requireIntersection        bool
	includeRawDataRows         bool
	resolveRowRefs             bool
	includeRows                bool
	includeSummary             bool
	summaryRequireIntersection *bool
	includeChildren            bool
	includeCosts               bool
	sortBy                     []evalSort
	filters                    []evalFilter
	matchAll                   bool // filter_logic_operator "and"
	limit                      *int64
	offset                     int64
}

// evalSortWire is EvalResultsSortBy on the wire.
type evalSortWire struct {
	Field            string  `json:"field"`
	Direction        string  `json:"direction"`
	EvaluationCallID *string `json:"evaluation_call_id"`
	Mode             string  `json:"mode"`
}

// evalFilterWire is EvalResultsFilter on the wire.
type evalFilterWire struct {
	EvaluationCallID *string         `json:"evaluation_call_id"`
	Query            json.RawMessage `json:"query"`
}

func (a *EvalResultsAPI) decode(body []byte) (evalResultsReq, error) {
	req := evalResultsReq{includeRows: true, includeChildren: true}
	var callIDs, runIDs []string
	var sorts []evalSortWire
	var filters []evalFilterWire
	logic := "or"
	err := wire.DecodeTop(body, wire.Fields{
		"evaluation_call_ids": &callIDs, "evaluation_run_ids": &runIDs,
		"require_intersection": &req.requireIntersection, "include_raw_data_rows": &req.includeRawDataRows,
		"resolve_row_refs": &req.resolveRowRefs, "include_rows": &req.includeRows,
		"include_summary": &req.includeSummary, "summary_require_intersection": &req.summaryRequireIntersection,
		"include_predict_and_score_children": &req.includeChildren, "include_costs": &req.includeCosts,
		"sort_by": &sorts, "filters": &filters, "filter_logic_operator": &logic,
		"limit": &req.limit, "offset": &req.offset,
	})
	if err != nil {
		return req, err
	}
	if req.evalIDs, err = evalRootIDs(callIDs, runIDs); err != nil {
		return req, err
	}
	switch logic {
	case "or":
	case "and":
		req.matchAll = true
	default:
		return req, &wire.FieldError{Field: "filter_logic_operator", Msg: fmt.Sprintf("%q is not one of \"and\", \"or\"", logic)}
	}
	if req.limit != nil && (*req.limit < 0 || *req.limit > MaxEvalResultsLimit) {
		return req, &wire.FieldError{Field: "limit", Msg: fmt.Sprintf("must be between 0 and %d; page with offset", MaxEvalResultsLimit)}
	}
	if req.offset < 0 {
		return req, &wire.FieldError{Field: "offset", Msg: "must not be negative"}
	}
	if req.sortBy, err = parseEvalSorts(sorts); err != nil {
		return req, err
	}
	if req.filters, err = parseEvalFilters(a.limits, filters); err != nil {
		return req, err
	}
	return req, nil
}

// evalRootIDs joins the evaluation call ids and run ids (a run is its
// evaluation's root call), without repeats, in request order.
func evalRootIDs(callIDs, runIDs []string) ([]string, error) {
	if len(callIDs)+len(runIDs) == 0 {
		return nil, wire.Missing("evaluation_call_ids", ": at least one of evaluation_call_ids or evaluation_run_ids must name an evaluation")
	}
	seen := map[string]bool{}
	var out []string
	for _, list := range []struct {
		field string
		ids   []string
	}{{"evaluation_call_ids", callIDs}, {"evaluation_run_ids", runIDs}} {
		for i, id := range list.ids {
			if err := wire.CheckID(fmt.Sprintf("%s[%d]", list.field, i), id); err != nil {
				return nil, err
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	if len(out) > MaxEvalResultsEvaluations {
		return nil, &wire.FieldError{Field: "evaluation_call_ids",
			Msg: fmt.Sprintf("names %d evaluations; compare at most %d at once", len(out), MaxEvalResultsEvaluations)}
	}
	return out, nil
}

// query serves POST /v2/{entity}/{project}/eval_results/query.
func (a *EvalResultsAPI) query(r *http.Request, body []byte) (any, error) {
	projectID, p, err := pathProject(r, auth.Read)
	if err != nil {
		return nil, err
	}
	req, err := a.decode(body)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	roots, err := a.readRoots(ctx, projectID, req.evalIDs)
	if err != nil {
		return nil, err
	}
	calls, err := a.readTraces(ctx, projectID, roots)
	if err != nil {
		return nil, err
	}
	all := groupEvalRows(calls, req.evalIDs, req.includeChildren, req.includeRawDataRows && req.includeRows)
	if req.includeCosts {
		if err := priceTrials(ctx, a.extras, projectID, all); err != nil {
			return nil, err
		}
	}
	res := evalResultsRes{Rows: []*evalResultsRow{}, Warnings: []string{}}
	if req.includeRows {
		rows := filterEvalRows(all, req.filters, req.matchAll)
		rows = intersect(rows, req.evalIDs, req.requireIntersection)
		sortEvalRows(rows, req.sortBy, req.evalIDs)
		res.TotalRows = len(rows)
		res.Rows = page(rows, req.offset, req.limit)
		if req.includeRawDataRows && req.resolveRowRefs {
			canRead := func(id string) bool { return p.Authorize(id, auth.Read) == nil }
			res.Warnings = a.resolveRows(ctx, projectID, canRead, res.Rows)
		}
	}
	if req.includeSummary {
		within := req.requireIntersection
		if req.summaryRequireIntersection != nil {
			within = *req.summaryRequireIntersection
		}
		res.Summary = summarize(intersect(all, req.evalIDs, within), req.evalIDs, roots)
	}
	return res, nil
}

// readRoots reads the evaluations' root calls; an id that names none is
// the reference's 404.
func (a *EvalResultsAPI) readRoots(ctx context.Context, projectID string, ids []string) (map[string]storage.StoredCall, error) {
	q := storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{CallIDs: ids}, Limit: int64(len(ids))}
	roots := make(map[string]storage.StoredCall, len(ids))
	for c, err := range a.calls.QueryCalls(ctx, q) {
		if err != nil {
			return nil, fmt.Errorf("reading evaluation calls: %w", err)
		}
		roots[c.ID] = c
	}
	for _, id := range ids {
		if _, ok := roots[id]; !ok {
			return nil, notFound("Evaluation", id)
		}
	}
	return roots, nil
}

// evalTraceColumns are the columns a comparison reads of each call.
func evalTraceColumns() []string {
	return []string{"id", "trace_id", "parent_id", "op_name", "display_name", "started_at", "ended_at",
		"attributes", "inputs", "output", "summary", "exception"}
}

// readTraces reads every call of the evaluations' traces in one bounded
// read: the rows, their predictions and scores sit under the roots in the
// roots' traces, as both the SDK and the evaluation runs API write them.
func (a *EvalResultsAPI) readTraces(ctx context.Context, projectID string, roots map[string]storage.StoredCall) ([]storage.StoredCall, error) {
	traces := make([]string, 0, len(roots))
	for _, c := range roots {
		traces = append(traces, c.TraceID)
	}
	traces = distinct(traces)
	q := storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{TraceIDs: traces},
		SortBy: []storage.SortBy{}, Limit: MaxEvalResultsCalls + 1, Columns: evalTraceColumns()}
	var out []storage.StoredCall
	for c, err := range a.calls.QueryCalls(ctx, q) {
		if err != nil {
			return nil, fmt.Errorf("reading evaluation traces: %w", err)
		}
		out = append(out, c)
	}
	if len(out) > MaxEvalResultsCalls {
		return nil, &wire.FieldError{Field: "evaluation_call_ids",
			Msg: fmt.Sprintf("the evaluations hold more than %d calls; compare fewer evaluations", MaxEvalResultsCalls)}
	}
	return out, nil
}

// page is rows[offset:offset+limit], within bounds.
func page(rows []*evalResultsRow, offset int64, limit *int64) []*evalResultsRow {
	if offset >= int64(len(rows)) {
		return []*evalResultsRow{}
	}
	rows = rows[offset:]
	if limit != nil && *limit < int64(len(rows)) {
		rows = rows[:*limit]
	}
	return rows
}
