package traceapi

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// TablesAPI serves content-addressed tables: create, update, query and
// stats. Every handler authorises the project before the store is called.
type TablesAPI struct {
	store    storage.TableStore
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
}

// NewTablesAPI builds the tables endpoints over store; their reads run
// within the Budget WithQueryLimits sets.
func NewTablesAPI(store storage.TableStore, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *TablesAPI {
	return &TablesAPI{store: store, logger: logger, maxBytes: maxBodyBytes, budget: newReadBudget(applyOptions(opts), logger)}
}

// Register adds the tables routes to mux; wrap is applied to every handler.
func (a *TablesAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for pattern, h := range map[string]httpapi.BodyHandler{
		"POST /table/create":              a.create,
		"POST /table/update":              a.update,
		"POST /table/create_from_digests": a.createFromDigests,
		"POST /table/query":               a.budget.json(a.query),
		"POST /table/query_stats":         a.budget.json(a.stats),
		"POST /table/query_stats_batch":   a.budget.json(a.statsBatch),
	} {
		mux.Handle(pattern, wrap(httpapi.JSON(a.logger, a.maxBytes, h)))
	}
	mux.Handle("POST /table/query_stream", wrap(http.HandlerFunc(a.queryStream)))
}

func (a *TablesAPI) create(r *http.Request, body []byte) (any, error) {
	var table wire.TableSchemaForInsert
	if err := wire.DecodeTop(body, wire.Fields{"table": &table}, "table"); err != nil {
		return nil, err
	}
	req := storage.TableCreateReq{Table: table.Storage()}
	switch {
	case req.Table.ProjectID == "":
		return nil, wire.Missing("table.project_id", " (form entity/project)")
	case req.Table.Rows == nil:
		return nil, wire.Missing("table.rows", " (a list of JSON objects, may be empty)")
	}
	for i, row := range req.Table.Rows {
		if err := wire.MustBeObject(fmt.Sprintf("table.rows[%d]", i), row); err != nil {
			return nil, err
		}
	}
	if _, err := httpapi.Authorize(r.Context(), req.Table.ProjectID, auth.Write); err != nil {
		return nil, err
	}
	res, err := a.store.CreateTable(r.Context(), req)
	return wire.TableCreateRes(res), err
}

func (a *TablesAPI) update(r *http.Request, body []byte) (any, error) {
	var req storage.TableUpdateReq
	var updates []wire.TableUpdateSpec
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "base_digest": &req.BaseDigest,
		"updates": &updates}, "project_id", "base_digest", "updates")
	if err != nil {
		return nil, err
	}
	if err := rowsAreObjects(updates); err != nil {
		return nil, err
	}
	req.Updates = wire.StorageUpdates(updates)
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write); err != nil {
		return nil, err
	}
	res, err := a.store.UpdateTable(r.Context(), req)
	return wire.TableUpdateRes(res), err
}

func (a *TablesAPI) createFromDigests(r *http.Request, body []byte) (any, error) {
	var req storage.TableCreateFromDigestsReq
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "row_digests": &req.RowDigests,
		"expected_digest": &req.ExpectedDigest}, "project_id", "row_digests")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write); err != nil {
		return nil, err
	}
	res, err := a.store.CreateTableFromDigests(r.Context(), req)
	return wire.TableCreateFromDigestsRes(res), err
}

// decodeRowsQuery reads a /table/query or /table/query_stream body and
// authorises it.
func decodeRowsQuery(r *http.Request, body []byte) (storage.TableQueryReq, error) {
	var req storage.TableQueryReq
	var filter *wire.TableRowFilter
	var sortBy []wire.SortBy
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "digest": &req.Digest,
		"filter": &filter, "limit": &req.Limit, "offset": &req.Offset, "sort_by": &sortBy},
		"project_id", "digest")
	if err == nil {
		err = wire.CheckPaging(req.Limit, req.Offset)
	}
	if err != nil {
		return req, err
	}
	req.Filter, req.SortBy = filter.Storage(), wire.StorageSort(sortBy)
	_, err = httpapi.Authorize(r.Context(), req.ProjectID, auth.Read)
	return req, err
}

func (a *TablesAPI) query(r *http.Request, body []byte) (any, error) {
	req, err := decodeRowsQuery(r, body)
	if err != nil {
		return nil, err
	}
	res, err := a.store.QueryTable(r.Context(), req)
	return wire.NewTableQueryRes(res), err
}

// queryStream answers the rows of /table/query as JSON lines. The store
// answers them whole, within the budget; they are written after the
// read's turn has ended.
func (a *TablesAPI) queryStream(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadJSON(r, a.maxBytes)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	run, err := a.budget.start(r)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	res, err := a.rowsForStream(r.WithContext(run.ctx), body)
	err = run.explain(err)
	run.end()
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	writeJSONLines(w, r, a.logger, func(yield func(any, error) bool) {
		for _, row := range wire.NewTableQueryRes(res).Rows {
			if !yield(row, nil) {
				return
			}
		}
	})
}

func (a *TablesAPI) rowsForStream(r *http.Request, body []byte) (storage.TableQueryRes, error) {
	req, err := decodeRowsQuery(r, body)
	if err != nil {
		return storage.TableQueryRes{}, err
	}
	return a.store.QueryTable(r.Context(), req)
}

func (a *TablesAPI) stats(r *http.Request, body []byte) (any, error) {
	var req storage.TableQueryStatsReq
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "digest": &req.Digest}, "project_id", "digest")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	res, err := a.store.QueryTableStats(r.Context(), req)
	return wire.TableQueryStatsRes(res), err
}

func (a *TablesAPI) statsBatch(r *http.Request, body []byte) (any, error) {
	var req storage.TableQueryStatsBatchReq
	err := wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "digests": &req.Digests,
		"include_storage_size": &req.IncludeStorageSize}, "project_id")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Read); err != nil {
		return nil, err
	}
	res, err := a.store.QueryTableStatsBatch(r.Context(), req)
	return wire.NewTableQueryStatsBatchRes(res), err
}

// rowsAreObjects refuses an appended or inserted row that is no JSON
// object, as the reference's request schema does (422).
func rowsAreObjects(updates []wire.TableUpdateSpec) error {
	for i, u := range updates {
		var err error
		switch {
		case u.Append != nil:
			err = wire.MustBeObject(fmt.Sprintf("updates[%d].append.row", i), u.Append.Row)
		case u.Insert != nil:
			err = wire.MustBeObject(fmt.Sprintf("updates[%d].insert.row", i), u.Insert.Row)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
