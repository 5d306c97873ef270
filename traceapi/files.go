package traceapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// maxFormValueBytes bounds the text parts of an upload (project_id,
// expected_digest).
const maxFormValueBytes = 4 << 10

// FilesAPI serves file upload, download and stats. Uploads and downloads
// stream through the store; neither is held whole in memory.
type FilesAPI struct {
	files        storage.FileStore
	logger       *slog.Logger
	maxFileBytes int64
	maxBodyBytes int64
	budget       *readBudget
}

// NewFilesAPI builds the files endpoints. maxFileBytes bounds one uploaded
// file (413 above it); maxBodyBytes bounds JSON request bodies. File
// stats run within the Budget WithQueryLimits sets; uploads and downloads,
// which move bytes between the client and the files directory, do not.
func NewFilesAPI(files storage.FileStore, maxFileBytes, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *FilesAPI {
	return &FilesAPI{files: files, logger: logger, maxFileBytes: maxFileBytes, maxBodyBytes: maxBodyBytes,
		budget: newReadBudget(applyOptions(opts), logger)}
}

// Register adds the files routes to mux; wrap is applied to every handler.
// Both spellings of each route are served: the TypeScript SDK uses the
// singular, the Python SDK the plural.
func (a *FilesAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	create, content := http.HandlerFunc(a.create), http.HandlerFunc(a.content)
	stats := httpapi.JSON(a.logger, a.maxBodyBytes, a.budget.json(a.stats))
	for pattern, h := range map[string]http.Handler{
		"POST /file/create": create, "POST /files/create": create,
		"POST /file/content": content, "POST /files/content": content,
		"POST /files/query_stats": stats, "POST /files/stats": stats,
	} {
		mux.Handle(pattern, wrap(h))
	}
}

func (a *FilesAPI) create(w http.ResponseWriter, r *http.Request) {
	info, err := a.upload(w, r)
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"digest": info.Digest})
}

// upload reads the form parts in order: project_id (and expected_digest)
// must come before the file part, as every SDK sends them, so the file can
// stream straight into the store.
func (a *FilesAPI) upload(w http.ResponseWriter, r *http.Request) (storage.FileInfo, error) {
	// The body may exceed the file limit by the form's other parts.
	r.Body = http.MaxBytesReader(w, r.Body, a.maxFileBytes+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return storage.FileInfo{}, httpapi.Errorf(http.StatusBadRequest,
			"request body must be multipart/form-data with parts project_id and file: "+err.Error())
	}
	var projectID string
	var expected *string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return storage.FileInfo{}, multipartError(err)
		}
		switch part.FormName() {
		case "project_id":
			projectID, err = formValue(part)
		case "expected_digest":
			var v string
			if v, err = formValue(part); v != "" {
				expected = &v
			}
		case "file":
			return a.storePart(w, r, part, projectID, expected, func() error { return noMoreFiles(mr) })
		}
		if err != nil {
			return storage.FileInfo{}, err
		}
	}
	if projectID == "" {
		return storage.FileInfo{}, wire.Missing("project_id", " (form entity/project)")
	}
	return storage.FileInfo{}, wire.Missing("file", ": a file part with the content")
}

// noMoreFiles refuses a form with a second file part: one request stores
// one file, and keeping either silently would lose the other. It runs when
// the first file's content ends, before the store commits it.
func noMoreFiles(mr *multipart.Reader) error {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return multipartError(err)
		}
		if part.FormName() == "file" {
			return &wire.FieldError{Field: "file", Msg: "more than one file part; send one file per request"}
		}
	}
}

func (a *FilesAPI) storePart(w http.ResponseWriter, r *http.Request, part *multipart.Part, projectID string, expected *string, atEOF func() error) (storage.FileInfo, error) {
	if projectID == "" {
		return storage.FileInfo{}, wire.Missing("project_id", " before the file part; send project_id first")
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Write); err != nil {
		return storage.FileInfo{}, err
	}
	if !utf8.ValidString(part.FileName()) {
		return storage.FileInfo{}, &wire.FieldError{Field: "file", Msg: "the file name is not valid UTF-8"}
	}
	content := &limitedPart{r: part, limit: a.maxFileBytes, atEOF: atEOF, progress: httpapi.NewProgress(w, r)}
	return a.files.CreateFile(r.Context(), storage.FileCreateReq{
		ProjectID: projectID, Name: part.FileName(), ExpectedDigest: expected, Content: content})
}

func formValue(part *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxFormValueBytes+1))
	if err != nil {
		return "", multipartError(err)
	}
	if len(b) > maxFormValueBytes {
		return "", &wire.FieldError{Field: part.FormName(), Msg: fmt.Sprintf("longer than %d bytes", maxFormValueBytes)}
	}
	return strings.TrimSpace(string(b)), nil
}

// multipartError classifies a failure to read the form: the body limit is
// 413, anything else a malformed request.
func multipartError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("request body over %d bytes: %w", mbe.Limit, storage.ErrTooLarge)
	}
	return httpapi.Errorf(http.StatusBadRequest, "malformed multipart body: "+err.Error())
}

// limitedPart reads a file part, failing once it passes limit bytes; at
// the part's end, atEOF may still fail the read (and so the upload). The
// read deadline moves on while content arrives: read_timeout bounds a
// stall, not a large upload.
type limitedPart struct {
	r        io.Reader
	n        int64
	limit    int64
	atEOF    func() error
	progress *httpapi.Progress
}

func (p *limitedPart) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress.Read()
	}
	p.n += int64(n)
	if p.n > p.limit {
		return n, fmt.Errorf("file larger than %d bytes (max_file_bytes); store it elsewhere and reference it: %w", p.limit, storage.ErrTooLarge)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, multipartError(err)
	}
	if errors.Is(err, io.EOF) && p.atEOF != nil {
		if ferr := p.atEOF(); ferr != nil {
			return n, ferr
		}
		p.atEOF = nil
	}
	return n, err
}

func (a *FilesAPI) content(w http.ResponseWriter, r *http.Request) {
	body, err := httpapi.ReadJSON(r, a.maxBodyBytes)
	var req struct{ ProjectID, Digest string }
	if err == nil {
		err = wire.DecodeTop(body, wire.Fields{"project_id": &req.ProjectID, "digest": &req.Digest}, "project_id", "digest")
	}
	if err == nil {
		_, err = httpapi.Authorize(r.Context(), req.ProjectID, auth.Read)
	}
	var info storage.FileInfo
	var rc io.ReadCloser
	if err == nil {
		info, rc, err = a.files.OpenFile(r.Context(), req.ProjectID, req.Digest)
	}
	if err != nil {
		httpapi.WriteError(w, r, a.logger, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(info.SizeBytes, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(progressWriter{w, httpapi.NewProgress(w, r)}, rc); err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		// Headers are gone: abort so the client sees a broken download,
		// never a short one that looks complete.
		a.logger.Warn("reading a file from the store failed mid-way; the client sees a broken download and may retry; if it repeats, check the store", "project", req.ProjectID, "digest", req.Digest, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// progressWriter moves the write deadline on as a download proceeds.
type progressWriter struct {
	w io.Writer
	p *httpapi.Progress
}

func (pw progressWriter) Write(b []byte) (int, error) {
	pw.p.Wrote()
	return pw.w.Write(b)
}

func (a *FilesAPI) stats(r *http.Request, body []byte) (any, error) {
	var projectID string
	if err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID}, "project_id"); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	st, err := a.files.FilesStats(r.Context(), projectID)
	return wire.FilesStats(st), err
}
