package traceapi

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// Bounds of the evaluation-run endpoints.
const (
	// MaxEvalListLimit is the most records one list answers: a list
	// without limit answers at most this many, and a larger limit is
	// refused; page with offset past it.
	MaxEvalListLimit = 10_000
	// MaxEvalDeleteIDs is the most ids one delete names, as for
	// /calls/delete.
	MaxEvalDeleteIDs = 1000
	// MaxEvalFilterValues is the most values one list filter takes, as
	// the reference server bounds its filter lists.
	MaxEvalFilterValues = 1000
)

// EvalRunStores are the stores the evaluation-run endpoints write besides
// calls: the placeholder ops their calls' op refs name, with their source
// files, and the feedback a score leaves on its prediction.
type EvalRunStores struct {
	Objects  storage.ObjectStore
	Files    storage.FileStore
	Feedback storage.FeedbackStore
}

// EvaluationRunsAPI serves the v2 evaluation runs, predictions and scores.
// They are not records of their own: as in the reference server, each is
// a call with marker attributes (attributes.weave), written through the
// same write path as every call and read back through the calls reader,
// so /calls/stream_query shows an evaluation exactly as the SDK's
// Evaluation.evaluate traces it. Unlike the rest of this package it
// writes through the ingest pipeline, so it needs both a call writer and
// a call reader that sees acknowledged writes.
type EvaluationRunsAPI struct {
	writes   consumer.Calls
	calls    CallReader
	stores   EvalRunStores
	rules    feedbackRules
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
	now      func() time.Time
	ops      opRefs
}

// NewEvaluationRunsAPI builds the endpoints: writes takes call writes (the
// pipeline's front), calls must see every write writes acknowledged.
func NewEvaluationRunsAPI(writes consumer.Calls, calls CallReader, stores EvalRunStores, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *EvaluationRunsAPI {
	now := time.Now
	return &EvaluationRunsAPI{writes: writes, calls: calls, stores: stores, rules: feedbackRules{now: now},
		logger: logger, maxBytes: maxBodyBytes, budget: newReadBudget(applyOptions(opts), logger), now: now}
}

// Register adds the routes to mux; wrap is applied to every handler.
// Reads run within the API's Budget; writes, and the reads a write needs,
// do not.
func (a *EvaluationRunsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	const base = "/v2/{entity}/{project}/"
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST " + base + "evaluation_runs":                            a.runCreate,
		"GET " + base + "evaluation_runs/{evaluation_run_id}":         a.budget.json(a.runRead),
		"DELETE " + base + "evaluation_runs":                          a.runDelete,
		"POST " + base + "evaluation_runs/{evaluation_run_id}/finish": a.runFinish,
		"POST " + base + "predictions":                                a.predictionCreate,
		"GET " + base + "predictions/{prediction_id}":                 a.budget.json(a.predictionRead),
		"DELETE " + base + "predictions":                              a.predictionDelete,
		"POST " + base + "predictions/{prediction_id}/finish":         a.predictionFinish,
		"POST " + base + "scores":                                     a.scoreCreate,
		"GET " + base + "scores/{score_id}":                           a.budget.json(a.scoreRead),
		"DELETE " + base + "scores":                                   a.scoreDelete,
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
	mux.Handle("GET "+base+"evaluation_runs", wrap(a.list(a.runQuery, runRes)))
	mux.Handle("GET "+base+"predictions", wrap(a.list(a.predictionQuery, predictionRes)))
	mux.Handle("GET "+base+"scores", wrap(a.list(a.scoreQuery, scoreRes)))
}

// pathProject is the project of a v2 path, authorised for need.
func pathProject(r *http.Request, need auth.Access) (string, auth.Principal, error) {
	projectID := r.PathValue("entity") + "/" + r.PathValue("project")
	p, err := httpapi.Authorize(r.Context(), projectID, need)
	return projectID, p, err
}

// pathID is the record id a path names, checked like every call id.
func pathID(r *http.Request, name string) (string, error) {
	id := r.PathValue(name)
	return id, wire.CheckID(name, id)
}

// notFound is the reference's 404 for a record id that names none.
func notFound(kind, id string) error {
	return httpapi.Errorf(http.StatusNotFound, fmt.Sprintf("%s %s not found", kind, id))
}

// newCallID is a new call id, a UUIDv7 as the reference generates.
func newCallID() string { return uuid.Must(uuid.NewV7()).String() }

// stamp is the time a call part is written at, in the store's precision.
func (a *EvaluationRunsAPI) stamp() time.Time { return a.now().UTC().Truncate(time.Microsecond) }

// write hands ops to the pipeline in order, as one batch, and returns once
// they are durable.
func (a *EvaluationRunsAPI) write(ctx context.Context, ops ...storage.CallOp) ([]storage.CallOpResult, error) {
	res, err := a.writes.ConsumeCalls(ctx, ops)
	if err != nil {
		return nil, fmt.Errorf("writing calls: %w", err)
	}
	return res, nil
}

// readCall reads one live call of the project; ok is false when there is
// none with that id.
func (a *EvaluationRunsAPI) readCall(ctx context.Context, projectID, id string) (c storage.StoredCall, ok bool, err error) {
	q := storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{CallIDs: []string{id}}, Limit: 1}
	for c, err := range a.calls.QueryCalls(ctx, q) {
		return c, err == nil, err
	}
	return storage.StoredCall{}, false, nil
}

// deleteCalls deletes the calls (and their descendants) the query
// parameter param names, as /calls/delete does.
func (a *EvaluationRunsAPI) deleteCalls(r *http.Request, param string) (any, error) {
	projectID, p, err := pathProject(r, auth.Write)
	if err != nil {
		return nil, err
	}
	ids := queryList(r, param)
	if len(ids) == 0 {
		return nil, wire.Missing(param, ": one or more ids as repeated query parameters")
	}
	if len(ids) > MaxEvalDeleteIDs {
		return nil, httpapi.Errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("Cannot delete more than %d calls at once", MaxEvalDeleteIDs))
	}
	for i, id := range ids {
		if err := wire.CheckID(fmt.Sprintf("%s[%d]", param, i), id); err != nil {
			return nil, err
		}
	}
	op := storage.CallOp{Delete: &storage.CallDelete{ProjectID: projectID, IDs: ids, WBUserID: p.UserID, At: a.stamp()}}
	res, err := a.write(r.Context(), op)
	if err != nil {
		return nil, err
	}
	return map[string]int{"num_deleted": res[0].NumDeleted}, nil
}

// queryList is a list query parameter: repeated keys, each of which may
// hold comma-separated values (the Python SDK's HTTP client joins them).
// Ids and weave refs never contain commas.
func queryList(r *http.Request, key string) []string {
	var out []string
	for _, v := range r.URL.Query()[key] {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// listQuery builds what a list asks of the calls reader from the
// request's parameters, or returns the request's error.
type listQuery func(r *http.Request) (storage.CallsQuery, error)

// list serves a GET list: the query's calls, each rendered by render, as
// JSON Lines (application/jsonl), within limit and offset. The read takes
// its turn at the store once authorised, as /calls/stream_query does.
func (a *EvaluationRunsAPI) list(build listQuery, render func(storage.StoredCall) any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := a.authorizedList(r, build)
		if err != nil {
			httpapi.WriteError(w, r, a.logger, err)
			return
		}
		if q.Limit == 0 {
			// limit=0: the store would read it as no limit.
			writeJSONLines(w, r, a.logger, func(func(any, error) bool) {})
			return
		}
		a.budget.stream(w, r, func(r *http.Request) (iter.Seq2[any, error], error) {
			return renderCalls(a.calls.QueryCalls(r.Context(), q), render), nil
		})
	})
}

func (a *EvaluationRunsAPI) authorizedList(r *http.Request, build listQuery) (storage.CallsQuery, error) {
	projectID, _, err := pathProject(r, auth.Read)
	if err != nil {
		return storage.CallsQuery{}, err
	}
	limit, offset, err := evalListPaging(r)
	if err != nil {
		return storage.CallsQuery{}, err
	}
	q, err := build(r)
	q.ProjectID, q.Limit, q.Offset = projectID, limit, offset
	return q, err
}

func renderCalls(calls iter.Seq2[storage.StoredCall, error], render func(storage.StoredCall) any) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		for c, err := range calls {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(render(c), nil) {
				return
			}
		}
	}
}

// evalListPaging reads limit and offset, the limit at most
// MaxEvalListLimit, which is also what an absent limit means. A limit of
// 0 answers nothing, as in the reference.
func evalListPaging(r *http.Request) (limit, offset int64, err error) {
	if limit, offset, err = listPaging(r, MaxEvalListLimit); err != nil {
		return 0, 0, err
	}
	if limit > MaxEvalListLimit {
		return 0, 0, &wire.FieldError{Field: "limit", Msg: fmt.Sprintf("%d is over the most one list answers, %d; page with offset", limit, MaxEvalListLimit)}
	}
	return limit, offset, nil
}
