package chfront

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/weftdev/weft/internal/chdb"
)

// blockSize bounds each ClickHouse-compressed block, as the server does.
const blockSize = 1 << 20

func (h *Handler) writeResult(w http.ResponseWriter, r *http.Request, req *request, res *chdb.Result) {
	data, encoding, err := encodeResponse(r, req, res.Data)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", contentType(req.query.Format))
	hdr.Set("X-ClickHouse-Format", req.query.Format)
	hdr.Set("X-ClickHouse-Timezone", h.info.timezone)
	hdr.Set("X-ClickHouse-Server-Display-Name", h.info.displayName)
	hdr.Set("X-ClickHouse-Query-Id", req.queryID)
	hdr.Set("X-ClickHouse-Summary", summary(res))
	if encoding != "" {
		hdr.Set("Content-Encoding", encoding)
	}
	hdr.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

// encodeResponse applies compress=1 block compression, or HTTP compression
// when the client enabled it and accepts an encoding.
func encodeResponse(r *http.Request, req *request, data []byte) ([]byte, string, error) {
	if req.compress {
		out, err := compressBlocks(data, req.method)
		return out, "", err
	}
	if !req.httpComp || len(data) == 0 {
		return data, "", nil
	}
	enc := acceptedEncoding(r.Header.Get("Accept-Encoding"))
	if enc == "" {
		return data, "", nil
	}
	var buf bytes.Buffer
	zw, err := newEncoder(&buf, enc, req.zlibLevel)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, "", fmt.Errorf("compress response: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("compress response: %w", err)
	}
	return buf.Bytes(), enc, nil
}

func compressBlocks(data []byte, m compress.Method) ([]byte, error) {
	cw := compress.NewWriter(compress.LevelZero, m)
	var out []byte
	for len(data) > 0 {
		n := min(len(data), blockSize)
		if err := cw.Compress(data[:n]); err != nil {
			return nil, fmt.Errorf("compress response: %w", err)
		}
		out = append(out, cw.Data...)
		data = data[n:]
	}
	return out, nil
}

func acceptedEncoding(accept string) string {
	for _, part := range strings.Split(accept, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch name = strings.ToLower(name); name {
		case "gzip", "deflate", "br", "zstd":
			return name
		}
	}
	return ""
}

func newEncoder(w io.Writer, enc string, level int) (io.WriteCloser, error) {
	switch enc {
	case "gzip":
		return gzip.NewWriterLevel(w, level)
	case "deflate":
		return zlib.NewWriterLevel(w, level)
	case "br":
		return brotli.NewWriterLevel(w, level), nil
	default:
		return zstd.NewWriter(w)
	}
}

func contentType(format string) string {
	f := strings.ToLower(format)
	switch {
	case strings.HasPrefix(f, "native"), strings.HasPrefix(f, "rowbinary"),
		strings.HasPrefix(f, "arrow"), strings.HasPrefix(f, "parquet"):
		return "application/octet-stream"
	case strings.HasPrefix(f, "json"):
		return "application/json; charset=UTF-8"
	case strings.HasPrefix(f, "tabseparated"), strings.HasPrefix(f, "tsv"):
		return "text/tab-separated-values; charset=UTF-8"
	case strings.HasPrefix(f, "csv"):
		return "text/csv; charset=UTF-8; header=absent"
	}
	return "text/plain; charset=UTF-8"
}

func summary(res *chdb.Result) string {
	return fmt.Sprintf(`{"read_rows":"%d","read_bytes":"%d","written_rows":"%d","written_bytes":"%d",`+
		`"total_rows_to_read":"%d","result_rows":"%d","result_bytes":"%d","elapsed_ns":"%d"}`,
		res.RowsRead, res.BytesRead, res.RowsWritten, res.BytesWritten, res.RowsRead, res.ResultRows, len(res.Data),
		res.Elapsed.Nanoseconds())
}

// writeError answers the way ClickHouse does: the exception text as the body,
// its code in X-ClickHouse-Exception-Code and an HTTP status by error kind.
// clickhouse-go turns this into a *clickhouse.Exception.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ex *chdb.Error
	if !errors.As(err, &ex) {
		h.log.ErrorContext(r.Context(), "chfront: a request failed outside the engine; the client got exception 1001; check the error and the spool directory", "error", err)
		ex = exception(1001, "STD_EXCEPTION", "%v", err)
	} else {
		h.log.DebugContext(r.Context(), "query failed", "code", ex.Code, "error", ex.Message)
	}
	hdr := w.Header()
	hdr.Del("Content-Encoding")
	hdr.Set("Content-Type", "text/plain; charset=UTF-8")
	hdr.Set("X-ClickHouse-Exception-Code", strconv.Itoa(ex.Code))
	if ex.Name != "" {
		hdr.Set("X-ClickHouse-Exception-Name", ex.Name)
	}
	w.WriteHeader(statusOf(ex))
	_, _ = io.WriteString(w, ex.Message+"\n")
}

// exception builds an error in the engine's format for failures the front
// end detects itself.
func exception(code int, name, format string, args ...any) *chdb.Error {
	msg := fmt.Sprintf("Code: %d. DB::Exception: %s. (%s)", code, fmt.Sprintf(format, args...), name)
	return &chdb.Error{Code: code, Name: name, Message: msg}
}

// statusByName is ClickHouse's mapping from exception to HTTP status; any
// other exception is a 500.
var statusByName = map[string]int{
	"UNKNOWN_TABLE": 404, "UNKNOWN_FUNCTION": 404, "UNKNOWN_IDENTIFIER": 404, "UNKNOWN_TYPE": 404,
	"UNKNOWN_STORAGE": 404, "UNKNOWN_DATABASE": 404, "UNKNOWN_SETTING": 404,
	"UNKNOWN_DIRECTION_OF_SORTING": 404, "UNKNOWN_AGGREGATE_FUNCTION": 404, "UNKNOWN_FORMAT": 404,
	"UNKNOWN_DATABASE_ENGINE": 404, "UNKNOWN_TYPE_OF_QUERY": 404, "UNKNOWN_ROLE": 404,

	"SYNTAX_ERROR": 400, "BAD_ARGUMENTS": 400, "TYPE_MISMATCH": 400, "ILLEGAL_COLUMN": 400,
	"DUPLICATE_COLUMN": 400, "THERE_IS_NO_COLUMN": 400, "INCORRECT_DATA": 400,
	"VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE": 400, "CANNOT_COMPILE_REGEXP": 400,
	"UNKNOWN_ELEMENT_IN_AST": 400, "UNKNOWN_TYPE_OF_AST_NODE": 400, "TOO_DEEP_AST": 400,
	"TOO_BIG_AST": 400, "UNEXPECTED_AST_STRUCTURE": 400, "CANNOT_READ_ALL_DATA": 400,
	"CANNOT_DECOMPRESS": 400, "ARGUMENT_OUT_OF_BOUND": 400, "UNKNOWN_COMPRESSION_METHOD": 400,

	"REQUIRED_PASSWORD": 401, "AUTHENTICATION_FAILED": 403, "ACCESS_DENIED": 403, "READONLY": 403,
	"QUERY_IS_TOO_LARGE": 413, "NOT_IMPLEMENTED": 501, "TIMEOUT_EXCEEDED": 504,
}

func statusOf(ex *chdb.Error) int {
	if s, ok := statusByName[ex.Name]; ok {
		return s
	}
	if strings.HasPrefix(ex.Name, "CANNOT_PARSE_") {
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// logger returns l, or the default logger when l is nil.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
