package traceapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// CallReader is the part of the storage contract the calls endpoints use.
type CallReader interface {
	QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error]
	CountCalls(ctx context.Context, q storage.CallsQuery, limit int64) (storage.CallsStats, error)
}

// callsQueryReq is CallsQueryReq on the wire; fields the storage query
// does not carry are accepted for compatibility.
type callsQueryReq struct {
	q              storage.CallsQuery
	limit, offset  *int64
	returnExpanded *bool
	latestOnly     bool
	query          json.RawMessage
}

// decodeCallsQuery reads a CallsQueryReq and parses its query within lim,
// so a bad or oversized query is refused before any answer is written;
// expand reports whether expanded ref values are returned
// (return_expanded_column_values, default true).
func decodeCallsQuery(body []byte, lim querylang.Limits) (storage.CallsQuery, bool, error) {
	var r callsQueryReq
	var sortBy []wire.SortBy
	var filter wire.CallsFilter
	err := wire.DecodeTop(body, wire.Fields{
		"project_id": &r.q.ProjectID, "filter": &filter, "query": &r.query,
		"sort_by": &sortBy, "limit": &r.limit, "offset": &r.offset,
		"columns": &r.q.Columns, "expand_columns": &r.q.ExpandColumns,
		"return_expanded_column_values": &r.returnExpanded,
		"include_costs":                 &r.q.IncludeCosts, "include_feedback": &r.q.IncludeFeedback,
		"include_storage_size": &r.q.IncludeStorageSize, "include_total_storage_size": &r.q.IncludeTotalStorageSize,
		"include_usernames": &r.q.IncludeUsernames, "latest_only": &r.latestOnly,
	}, "project_id")
	if err != nil {
		return storage.CallsQuery{}, false, err
	}
	if err := wire.CheckPaging(r.limit, r.offset); err != nil {
		return storage.CallsQuery{}, false, err
	}
	if err := checkSort(lim, sortBy); err != nil {
		return storage.CallsQuery{}, false, err
	}
	r.q.SortBy, r.q.Filter = wire.StorageSort(sortBy), filter.Storage()
	if r.q.Where, err = lim.Parse(r.query); err != nil {
		return storage.CallsQuery{}, false, err
	}
	if r.limit != nil && *r.limit > 0 {
		r.q.Limit = *r.limit
	}
	if r.offset != nil && *r.offset > 0 {
		r.q.Offset = *r.offset
	}
	return r.q, r.returnExpanded == nil || *r.returnExpanded, nil
}

// callsStreamQuery streams the calls of a query. Its turn at the store is
// taken once the body is read, and held until the stream ends; the
// store's work on each page is bounded by the budget's MaxDuration.
func (a *API) callsStreamQuery(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadJSON(r, a.maxBytes)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	a.budget.stream(w, r, func(r *http.Request) (iter.Seq2[any, error], error) {
		q, expand, err := a.authorizedCallsQuery(r, body)
		if err != nil {
			return nil, err
		}
		return a.callLines(r, q, expand), nil
	})
}

func (a *API) authorizedCallsQuery(r *http.Request, body []byte) (storage.CallsQuery, bool, error) {
	q, expand, err := decodeCallsQuery(body, a.limits)
	if err != nil {
		return q, false, err
	}
	if _, err = httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return q, false, err
	}
	return q, expand, a.withCostPrices(r.Context(), &q, body)
}

// eachCall reads the calls of q, adds the requested extras and ref
// expansions batch by batch, and passes each rendered call to emit, in
// order.
func (a *API) eachCall(ctx context.Context, q storage.CallsQuery, expand bool, emit func(wire.CallSchema) error) error {
	en := newEnricher(a.extras, q)
	var ex *expander
	if expand {
		ex = newExpander(a.extras.Refs, callerCanRead(ctx), q.ExpandColumns)
	}
	var pending []storage.StoredCall
	flush := func() error {
		out, err := a.render(ctx, en, ex, pending)
		if err != nil {
			return err
		}
		for _, c := range out {
			if err := emit(c); err != nil {
				return err
			}
		}
		pending = pending[:0]
		return nil
	}
	for c, err := range a.calls.QueryCalls(ctx, q) {
		if err != nil {
			return err
		}
		if !en.active() && ex == nil {
			if err := emit(wire.NewCallSchema(c, en.base(c))); err != nil {
				return err
			}
			continue
		}
		if pending = append(pending, c); len(pending) == extrasBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// render turns a batch of stored calls into wire calls with extras and
// expansions.
func (a *API) render(ctx context.Context, en *enricher, ex *expander, calls []storage.StoredCall) ([]wire.CallSchema, error) {
	xs, err := en.extras(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([]wire.CallSchema, len(calls))
	for i, c := range calls {
		out[i] = wire.NewCallSchema(c, xs[i])
	}
	if ex != nil {
		if err := ex.expand(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// callerCanRead answers, for ref expansion, whether the request's caller
// may read a project.
func callerCanRead(ctx context.Context) func(string) bool {
	p, ok := httpapi.PrincipalFrom(ctx)
	return func(projectID string) bool { return ok && p.Authorize(projectID, auth.Read) == nil }
}

// errClientGone stops reading calls once the stream's writer gave up.
var errClientGone = errors.New("client went away")

// callLines are the calls of q as rows are produced, one JSON line each,
// for the same writer as every other JSONL endpoint.
func (a *API) callLines(r *http.Request, q storage.CallsQuery, expand bool) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		err := a.eachCall(r.Context(), q, expand, func(c wire.CallSchema) error {
			if !yield(c, nil) {
				return errClientGone
			}
			return nil
		})
		if err != nil && !errors.Is(err, errClientGone) {
			yield(nil, err)
		}
	}
}

// callsQuery is the legacy non-streaming form: {"calls": [...]}.
func (a *API) callsQuery(r *http.Request, body []byte) (any, error) {
	q, expand, err := decodeCallsQuery(body, a.limits)
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	if err := a.withCostPrices(r.Context(), &q, body); err != nil {
		return nil, err
	}
	calls := []wire.CallSchema{}
	err = a.eachCall(r.Context(), q, expand, func(c wire.CallSchema) error {
		calls = append(calls, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"calls": calls}, nil
}

func (a *API) callRead(r *http.Request, body []byte) (any, error) {
	var q storage.CallsQuery
	var id string
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "id": &id,
		"include_costs": &q.IncludeCosts, "include_storage_size": &q.IncludeStorageSize,
		"include_total_storage_size": &q.IncludeTotalStorageSize}, "project_id", "id")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	q.Filter.CallIDs = []string{id}
	q.Limit = 1
	var found *wire.CallSchema
	err = a.eachCall(r.Context(), q, false, func(c wire.CallSchema) error {
		found = &c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"call": found}, nil
}

func (a *API) callsQueryStats(r *http.Request, body []byte) (any, error) {
	var q storage.CallsQuery
	var limit *int64
	var query json.RawMessage
	var filter wire.CallsFilter
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "filter": &filter, "query": &query,
		"limit": &limit, "include_total_storage_size": &q.IncludeTotalStorageSize,
		"expand_columns": &q.ExpandColumns}, "project_id")
	if err != nil {
		return nil, err
	}
	q.Filter = filter.Storage()
	if limit != nil && *limit < 1 {
		return nil, &wire.FieldError{Field: "limit", Msg: fmt.Sprintf("must be at least 1, got %d", *limit)}
	}
	if q.Where, err = a.limits.Parse(query); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), q.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	if err := a.withCostPrices(r.Context(), &q, body); err != nil {
		return nil, err
	}
	var max int64
	if limit != nil {
		max = *limit
	}
	st, err := a.calls.CountCalls(r.Context(), q, max)
	if err != nil {
		return nil, err
	}
	res := map[string]any{"count": st.Count, "has_more": max > 0 && st.Count >= max}
	if q.IncludeTotalStorageSize {
		res["total_storage_size_bytes"] = st.TotalStorageSizeBytes
	}
	return res, nil
}
