package traceapi

import (
	"bufio"
	"encoding/json"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// ThreadsAPI serves /threads/stream_query.
type ThreadsAPI struct {
	threads  storage.ThreadReader
	logger   *slog.Logger
	maxBytes int64
	limits   querylang.Limits
	budget   *readBudget
}

// NewThreadsAPI builds the threads endpoint over threads; its sort_by, and
// the read's run on the store, are bounded by WithQueryLimits.
func NewThreadsAPI(threads storage.ThreadReader, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *ThreadsAPI {
	o := applyOptions(opts)
	return &ThreadsAPI{threads: threads, logger: logger, maxBytes: maxBodyBytes, limits: o.limits,
		budget: newReadBudget(o, logger)}
}

// Register adds the threads route to mux; wrap is applied to the handler.
func (a *ThreadsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /threads/stream_query", wrap(http.HandlerFunc(a.streamQuery)))
}

// threadsFilter is ThreadsQueryFilter; nested, so unknown keys pass.
type threadsFilter struct {
	AfterDatetime  *wire.Time `json:"after_datetime"`
	BeforeDatetime *wire.Time `json:"before_datetime"`
	ThreadIDs      []string   `json:"thread_ids"`
}

func decodeThreadsQuery(body []byte, lim querylang.Limits) (storage.ThreadsQuery, error) {
	var q storage.ThreadsQuery
	var f threadsFilter
	var limit, offset *int64
	var sortBy []wire.SortBy
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "filter": &f,
		"limit": &limit, "offset": &offset, "sort_by": &sortBy}, "project_id")
	if err != nil {
		return q, err
	}
	if err := checkSort(lim, sortBy); err != nil {
		return q, err
	}
	q.SortBy = wire.StorageSort(sortBy)
	if err := wire.CheckPaging(limit, offset); err != nil {
		return q, err
	}
	if limit != nil {
		q.Limit = *limit
	}
	if offset != nil {
		q.Offset = *offset
	}
	if f.AfterDatetime != nil {
		q.AfterDatetime = &f.AfterDatetime.Time
	}
	if f.BeforeDatetime != nil {
		q.BeforeDatetime = &f.BeforeDatetime.Time
	}
	q.ThreadIDs = f.ThreadIDs
	return q, nil
}

// streamQuery streams threads; the read holds its turn at the store from
// when the body is read until the stream ends, under the budget.
func (a *ThreadsAPI) streamQuery(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadJSON(r, a.maxBytes)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	a.budget.stream(w, r, func(r *http.Request) (iter.Seq2[any, error], error) {
		q, err := a.authorizedQuery(r, body)
		if err != nil {
			return nil, err
		}
		return func(yield func(any, error) bool) {
			for th, err := range a.threads.QueryThreads(r.Context(), q) {
				if !yield(wire.NewThreadSchema(th), err) || err != nil {
					return
				}
			}
		}, nil
	})
}

func (a *ThreadsAPI) authorizedQuery(r *http.Request, body []byte) (storage.ThreadsQuery, error) {
	q, err := decodeThreadsQuery(body, a.limits)
	if err != nil {
		return q, err
	}
	_, err = httpapi.Authorize(r.Context(), q.ProjectID, auth.Read)
	return q, err
}

// writeJSONLines answers with one JSON line per item as items are
// produced; the write deadline moves on while they flow. An error before the first item is answered normally; after
// it the connection is aborted, so the client sees a broken stream rather
// than a silently short one.
func writeJSONLines(w http.ResponseWriter, r *http.Request, logger *slog.Logger, items iter.Seq2[any, error]) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	flusher, _ := w.(http.Flusher)
	progress := httpapi.NewProgress(w, r)
	started, lastFlush := false, time.Now()
	start := func() {
		w.Header().Set("Content-Type", "application/jsonl")
		w.WriteHeader(http.StatusOK)
		started = true
	}
	for item, err := range items {
		if err != nil && !started {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		if err != nil {
			logger.Warn("reading from the store failed mid-way through a streamed answer; the client sees a broken stream and may retry; if it repeats, check the store", "path", r.URL.Path, "err", err)
			panic(http.ErrAbortHandler)
		}
		if !started {
			start()
		}
		if enc.Encode(item) != nil {
			return // the client went away
		}
		if flusher != nil && time.Since(lastFlush) > 100*time.Millisecond {
			progress.Wrote()
			_ = bw.Flush()
			flusher.Flush()
			lastFlush = time.Now()
		}
	}
	if !started {
		start()
	}
	_ = bw.Flush()
}
