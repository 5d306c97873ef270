package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/protocol"
	"github.com/weftdev/weft/training/trajectory"
)

func (a *API) registerWorker(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/worker/lease", a.lease)
	mux.Handle("POST /v1/worker/jobs/{id}/heartbeat", a.budgeted(a.serve(a.heartbeat)))
	mux.Handle("POST /v1/worker/jobs/{id}/events", a.budgeted(a.serve(a.events)))
	mux.HandleFunc("PUT /v1/worker/jobs/{id}/files/{name...}", a.upload) // streams to storage
	mux.HandleFunc("GET /v1/worker/jobs/{id}/files/{digest}", a.download)
	mux.Handle("POST /v1/worker/jobs/{id}/checkpoints", a.budgeted(a.serve(a.checkpoint)))
	mux.Handle("POST /v1/worker/jobs/{id}/finish", a.budgeted(a.serve(a.finish)))
}

// decode reads a JSON body into v (a protocol type); unknown members
// are ignored.
func (a *API) decode(r *http.Request, v any) error {
	raw, err := httpapi.ReadJSON(r, a.maxBody)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		loc := []any{"body"}
		if errors.As(err, &te) && te.Field != "" {
			loc = append(loc, te.Field)
		}
		return &trajectory.Error{Loc: loc, Msg: "does not match the worker protocol: " + err.Error(), Type: "value_error"}
	}
	return nil
}

// lease long-polls for a job: 200 with the lease, 204 when none came.
// The wait is checked before anything is leased, so a refused request
// never takes a job.
func (a *API) lease(w http.ResponseWriter, r *http.Request) {
	p, err := a.authenticate(r)
	var req protocol.LeaseRequest
	if err == nil {
		err = a.decode(r, &req)
	}
	var wait time.Duration
	if err == nil {
		wait, err = leaseWait(req.WaitSeconds, a.svc.Config().MaxLeaseWait)
	}
	var l *protocol.Lease
	if err == nil {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + time.Minute))
		l, err = a.svc.Lease(httpapi.WithPrincipal(r.Context(), p), p, req.Worker, wait)
	}
	switch {
	case err != nil:
		a.writeError(w, r, err)
	case l == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusOK, l)
	}
}

// leaseWait is how long a lease request waits: seconds, which must be
// 0 through protocol.MaxWaitSeconds, capped at the server's maximum. The
// range is checked on the float, before converting it to a Duration,
// which overflows past about 292 years.
func leaseWait(seconds float64, most time.Duration) (time.Duration, error) {
	if !(seconds >= 0 && seconds <= protocol.MaxWaitSeconds) { // also NaN
		return 0, fmt.Errorf("wait_seconds: %v is out of range; send 0 (do not wait) through %d seconds: %w",
			seconds, protocol.MaxWaitSeconds, storage.ErrInvalidArgument)
	}
	return min(time.Duration(seconds*float64(time.Second)), most), nil
}

func leaseOf(r *http.Request) string { return r.Header.Get(protocol.LeaseHeader) }

func (a *API) heartbeat(r *http.Request, p auth.Principal) (any, error) {
	return a.svc.Heartbeat(r.Context(), p, r.PathValue("id"), leaseOf(r))
}

func (a *API) events(r *http.Request, p auth.Principal) (any, error) {
	var batch protocol.Events
	if err := a.decode(r, &batch); err != nil {
		return nil, err
	}
	n, err := a.svc.AppendEvents(r.Context(), p, r.PathValue("id"), leaseOf(r), batch)
	if err != nil {
		return nil, err
	}
	return map[string]int{"appended": n}, nil
}

func (a *API) checkpoint(r *http.Request, p auth.Principal) (any, error) {
	var reg protocol.CheckpointRegistration
	if err := a.decode(r, &reg); err != nil {
		return nil, err
	}
	return a.svc.RegisterCheckpoint(r.Context(), p, r.PathValue("id"), leaseOf(r), reg)
}

func (a *API) finish(r *http.Request, p auth.Principal) (any, error) {
	var f protocol.Finish
	if err := a.decode(r, &f); err != nil {
		return nil, err
	}
	j, err := a.svc.Finish(r.Context(), p, r.PathValue("id"), leaseOf(r), f)
	if err != nil {
		return nil, err
	}
	return jobOf(j), nil
}

// upload streams a checkpoint file into the job's project.
func (a *API) upload(w http.ResponseWriter, r *http.Request) {
	p, err := a.authenticate(r)
	var info storage.FileInfo
	if err == nil {
		body := &boundedBody{r: r.Body, limit: a.maxFileBytes, progress: httpapi.NewProgress(w, r)}
		info, err = a.svc.UploadFile(httpapi.WithPrincipal(r.Context(), p), p, r.PathValue("id"), leaseOf(r), r.PathValue("name"), body)
	}
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, protocol.Uploaded{Name: info.Name, Digest: info.Digest, Size: info.SizeBytes})
}

// boundedBody refuses more than limit bytes and moves the read deadline
// on while content arrives.
type boundedBody struct {
	r        io.Reader
	n, limit int64
	progress *httpapi.Progress
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.progress.Read()
	}
	if b.n += int64(n); b.n > b.limit {
		return n, fmt.Errorf("file larger than %d bytes (max_file_bytes): %w", b.limit, storage.ErrTooLarge)
	}
	return n, err
}

// download streams a file of the job's project to its worker.
func (a *API) download(w http.ResponseWriter, r *http.Request) {
	p, err := a.authenticate(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	info, rc, err := a.svc.OpenFile(httpapi.WithPrincipal(r.Context(), p), p, r.PathValue("id"), leaseOf(r), r.PathValue("digest"))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(info.SizeBytes, 10))
	progress := httpapi.NewProgress(w, r)
	buf := make([]byte, 64<<10)
	for {
		n, rerr := rc.Read(buf)
		if n > 0 {
			progress.Wrote()
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if errors.Is(rerr, io.EOF) {
			return
		}
		if rerr != nil {
			a.logger.Warn("training: reading a checkpoint file from the store failed mid-way; the client sees a broken download and may retry; if it repeats, check the store", "digest", info.Digest, "err", rerr)
			panic(http.ErrAbortHandler) // never a short file that looks complete
		}
	}
}
