package chfront

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ClickHouse/ch-go/compress"

	"github.com/weftdev/weft/internal/chdb"
)

// request is what one HTTP request asks for, before its body is read.
type request struct {
	query      chdb.Query
	sqlParam   string // the query URL parameter
	queryID    string
	revision   uint64 // client_protocol_version
	compress   bool   // compress=1: answer in ClickHouse compressed blocks
	decompress bool   // decompress=1: the body is in ClickHouse compressed blocks
	method     compress.Method
	httpComp   bool // enable_http_compression: honour Accept-Encoding
	zlibLevel  int  // http_zlib_compression_level
}

// reservedParams are URL parameters of the HTTP interface that are not
// settings.
var reservedParams = map[string]bool{
	"query": true, "database": true, "default_format": true, "client_protocol_version": true,
	"query_id": true, "quota_key": true, "compress": true, "decompress": true,
	"user": true, "password": true, "role": true, "stacktrace": true,
	"buffer_size": true, "wait_end_of_query": true,
}

// transportSettings are real settings that shape the HTTP exchange rather
// than the statement; the front end applies them itself, which also keeps the
// request on a pooled connection.
var transportSettings = map[string]bool{
	"enable_http_compression": true, "http_zlib_compression_level": true,
	"network_compression_method": true, "network_zstd_compression_level": true,
	"send_progress_in_http_headers": true, "http_headers_progress_interval_ms": true,
	"http_write_exception_in_output_format": true, "http_response_buffer_size": true,
	"http_wait_end_of_query": true,
}

func parseRequest(r *http.Request) (*request, error) {
	v := r.URL.Query()
	if v.Has("session_id") {
		return nil, exception(48, "NOT_IMPLEMENTED", "sessions (session_id) are not supported by this front end")
	}
	req := &request{
		sqlParam: v.Get("query"),
		queryID:  firstNonEmpty(v.Get("query_id"), newQueryID()),
		method:   compress.LZ4,
	}
	req.query.Database = firstNonEmpty(v.Get("database"), r.Header.Get("X-ClickHouse-Database"))
	req.query.Format = firstNonEmpty(v.Get("default_format"), r.Header.Get("X-ClickHouse-Format"), "TabSeparated")
	req.revision, _ = strconv.ParseUint(v.Get("client_protocol_version"), 10, 64)
	req.compress = truthy(v.Get("compress"))
	req.decompress = truthy(v.Get("decompress"))
	if err := req.applyTransport(v); err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(v) {
		value := v.Get(name)
		switch {
		case strings.HasPrefix(name, "param_"):
			req.query.Params = append(req.query.Params, chdb.Param{Name: strings.TrimPrefix(name, "param_"), Value: value})
		case reservedParams[name] || transportSettings[name]:
		default:
			req.query.Settings = append(req.query.Settings, chdb.Setting{Name: name, Value: value})
		}
	}
	return req, nil
}

func (req *request) applyTransport(v url.Values) error {
	req.httpComp = truthy(v.Get("enable_http_compression"))
	req.zlibLevel = 3
	if s := v.Get("http_zlib_compression_level"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 9 {
			return exception(69, "ARGUMENT_OUT_OF_BOUND", "http_zlib_compression_level must be between 1 and 9, got %q", s)
		}
		req.zlibLevel = n
	}
	if s := v.Get("network_compression_method"); s != "" {
		m, err := compress.MethodString(strings.ToLower(s))
		if err != nil {
			return exception(89, "UNKNOWN_COMPRESSION_METHOD", "Unknown compression method: %s", s)
		}
		req.method = m
	}
	return nil
}

// newQueryID makes a random UUID, as ClickHouse does for queries without one.
func newQueryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true":
		return true
	}
	return false
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// sortedKeys keeps SET statements and parameter lists deterministic.
func sortedKeys(v url.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
