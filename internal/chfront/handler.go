package chfront

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/weftdev/weft/internal/chdb"
)

// Handler speaks the ClickHouse HTTP interface over an engine.
type Handler struct {
	eng      *chdb.Engine
	log      *slog.Logger
	spoolDir string
	info     serverInfo
}

type serverInfo struct {
	displayName, timezone string
}

// NewHandler serves eng. INSERT data is spooled to files in spoolDir, which
// the caller owns; a RAM-backed directory keeps inserts fast.
func NewHandler(ctx context.Context, eng *chdb.Engine, spoolDir string, log *slog.Logger) (*Handler, error) {
	h := &Handler{eng: eng, log: logger(log), spoolDir: spoolDir}
	res, err := eng.Query(ctx, chdb.Query{SQL: "SELECT displayName(), timezone()", Format: "TabSeparated"})
	if err != nil {
		return nil, fmt.Errorf("chfront: read server info: %w", err)
	}
	fields := strings.Split(strings.TrimRight(string(res.Data), "\n"), "\t")
	if len(fields) != 2 {
		return nil, fmt.Errorf("chfront: unexpected server info %q", res.Data)
	}
	h.info = serverInfo{displayName: fields[0], timezone: fields[1]}
	return h, nil
}

// ServeHTTP answers one request of the ClickHouse HTTP interface.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ping" || r.URL.Path == "/replicas_status":
		io.WriteString(w, "Ok.\n")
		return
	case r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, POST, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	case strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data"):
		h.writeError(w, r, exception(48, "NOT_IMPLEMENTED", "external tables are not supported by this front end"))
		return
	}
	req, err := parseRequest(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.sqlParam == "" && r.Method != http.MethodPost {
		// What ClickHouse answers to a bare GET /: a liveness check.
		io.WriteString(w, "Ok.\n")
		return
	}
	cleanup, err := h.prepare(r, req)
	defer cleanup()
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.run(r.Context(), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeResult(w, r, req, res)
}

func (h *Handler) run(ctx context.Context, req *request) (*chdb.Result, error) {
	hello := isHello(req.query.SQL)
	if hello {
		req.query.SQL = helloRewrite
	}
	res, err := h.eng.Query(ctx, req.query)
	if err != nil {
		return nil, err
	}
	if hello && req.revision > 0 && strings.EqualFold(req.query.Format, "Native") {
		if res.Data, err = reencodeHello(res.Data, req.revision); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// prepare settles the statement text from the query parameter and the body.
// As in ClickHouse, the statement is the query parameter, a line break, then
// the body; when that is an INSERT, what follows its FORMAT clause (or
// VALUES) is data and goes to a spool file. The returned cleanup is never nil.
func (h *Handler) prepare(r *http.Request, req *request) (func(), error) {
	cleanup := func() {}
	b, err := openBody(r, req.decompress)
	if err != nil {
		return cleanup, err
	}
	cleanup = b.close
	text := req.sqlParam
	if !b.empty() {
		if text != "" {
			text += "\n"
			if ins, ok := parseDataInsert(text); ok {
				// The data is the body alone: stream it to the spool file.
				return h.spoolInsert(req, ins, text, b, cleanup)
			}
		}
		rest, err := b.text()
		if err != nil {
			return cleanup, err
		}
		text += rest
	}
	if ins, ok := parseDataInsert(text); ok {
		return h.spoolInsert(req, ins, text, b, cleanup)
	}
	req.query.SQL = strings.TrimSpace(text)
	switch firstKeyword(req.query.SQL) {
	case "USE", "SET":
		// Without sessions they must not outlive the request.
		req.query.Isolated = true
	}
	return cleanup, nil
}

func (h *Handler) spoolInsert(req *request, ins dataInsert, text string, b *body, cleanup func()) (func(), error) {
	path, err := b.spool(h.spoolDir, text[ins.dataStart:])
	if err != nil {
		return cleanup, err
	}
	req.query.SQL = ins.fromInfile(path)
	return func() { cleanup(); os.Remove(path) }, nil
}
