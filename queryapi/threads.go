package queryapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/wire"
)

// ThreadReader is the part of the storage contract the threads endpoint
// uses. Each row holds the values of sqlgen.ThreadColumns in that order;
// time.Time values are printed as wire datetimes, nil as null.
type ThreadReader interface {
	QueryThreads(ctx context.Context, q sqlgen.ThreadsQuery) iter.Seq2[[]any, error]
}

// ThreadsAPI serves /threads/stream_query.
type ThreadsAPI struct {
	threads  ThreadReader
	logger   *slog.Logger
	maxBytes int64
}

// NewThreadsAPI builds the threads endpoint over threads.
func NewThreadsAPI(threads ThreadReader, maxBodyBytes int64, logger *slog.Logger) *ThreadsAPI {
	return &ThreadsAPI{threads: threads, logger: logger, maxBytes: maxBodyBytes}
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

func decodeThreadsQuery(body []byte) (sqlgen.ThreadsQuery, error) {
	var q sqlgen.ThreadsQuery
	var f threadsFilter
	var limit, offset *int64
	err := wire.DecodeTop(body, wire.Fields{"project_id": &q.ProjectID, "filter": &f,
		"limit": &limit, "offset": &offset, "sort_by": &q.SortBy}, "project_id")
	if err != nil {
		return q, err
	}
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

func (a *ThreadsAPI) streamQuery(w http.ResponseWriter, r *http.Request) {
	q, err := a.authorizedQuery(r)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	writeJSONLines(w, r, a.logger, func(yield func(any, error) bool) {
		for row, err := range a.threads.QueryThreads(r.Context(), q) {
			var line json.RawMessage
			if err == nil {
				line, err = threadJSON(row)
			}
			if !yield(line, err) || err != nil {
				return
			}
		}
	})
}

func (a *ThreadsAPI) authorizedQuery(r *http.Request) (sqlgen.ThreadsQuery, error) {
	body, err := httpapi.ReadJSON(r, a.maxBytes)
	if err != nil {
		return sqlgen.ThreadsQuery{}, err
	}
	q, err := decodeThreadsQuery(body)
	if err != nil {
		return q, err
	}
	_, err = httpapi.Authorize(r.Context(), q.ProjectID, auth.Read)
	return q, err
}

// threadJSON prints one thread row as a ThreadSchema object, keys in
// column order.
func threadJSON(vals []any) (json.RawMessage, error) {
	cols := sqlgen.ThreadColumns
	if len(vals) != len(cols) {
		return nil, fmt.Errorf("thread row has %d values for %d columns", len(vals), len(cols))
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, col := range cols {
		v := vals[i]
		if t, ok := v.(time.Time); ok {
			v = wire.Time{Time: t}
		}
		val, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("thread column %s: %w", col, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", col, val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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
			logger.Error("stream failed mid-way", "path", r.URL.Path, "err", err)
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
