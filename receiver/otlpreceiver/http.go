package otlpreceiver

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
)

// Paths served by the HTTP handler. Weave's docs and clients use the
// first; Weave's open-source router lists the second.
const (
	TracesPath      = "/otel/v1/traces"
	TracesPathAlias = "/otel/v1/trace"
)

// projectHeader routes a request to a project when resources do not.
const projectHeader = "project_id"

// encoding is an OTLP/HTTP body encoding.
type encoding int

const (
	encProto encoding = iota
	encJSON
)

func (e encoding) contentType() string {
	if e == encJSON {
		return "application/json"
	}
	return "application/x-protobuf"
}

// requestEncoding reads the Content-Type; parameters such as charset are
// ignored.
func requestEncoding(contentType string) (encoding, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, false
	}
	switch mt {
	case "application/x-protobuf", "application/protobuf":
		return encProto, true
	case "application/json":
		return encJSON, true
	}
	return 0, false
}

type httpHandler struct {
	in   *ingester
	bufs sync.Pool // *bytes.Buffer for request bodies
}

// NewHTTPHandler serves OTLP/HTTP trace export on TracesPath and
// TracesPathAlias; other paths answer 404. Mount it at the server root
// (or under http.StripPrefix for a prefixed deployment).
func NewHTTPHandler(cfg Config, v auth.Verifier, sub consumer.Calls, set telemetry.Settings) http.Handler {
	return newHTTPHandler(newIngester(cfg, v, sub, set, "http"))
}

func newHTTPHandler(in *ingester) http.Handler {
	h := &httpHandler{in: in}
	h.bufs.New = func() any { return new(bytes.Buffer) }
	mux := http.NewServeMux()
	mux.Handle(TracesPath, h)
	mux.Handle(TracesPathAlias, h)
	return mux
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeFailure(w, encJSON, fail(failMethod, "method %s is not allowed: use POST", r.Method), 0)
		return
	}
	enc, ok := requestEncoding(r.Header.Get("Content-Type"))
	if !ok {
		writeFailure(w, encJSON, fail(failUnsupported,
			"unsupported Content-Type %q: send application/x-protobuf or application/json", r.Header.Get("Content-Type")), 0)
		return
	}
	ctx := r.Context()
	principal, err := h.in.authenticate(ctx, r.Header)
	if err != nil {
		writeFailure(w, enc, asFailure(err), h.in.cfg.RetryAfter)
		return
	}
	buf := h.bufs.Get().(*bytes.Buffer)
	defer h.putBuffer(buf)
	if err := readBody(w, r, h.in.cfg.MaxRequestBytes, buf); err != nil {
		writeFailure(w, enc, asFailure(err), 0)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := unmarshal(req, enc, buf.Bytes()); err != nil {
		writeFailure(w, enc, err, 0)
		return
	}
	out, err := h.in.export(ctx, principal, r.Header.Get(projectHeader), req.Traces())
	if err != nil {
		writeFailure(w, enc, asFailure(err), h.in.cfg.RetryAfter)
		return
	}
	writeExportResponse(w, enc, out)
}

// putBuffer returns a body buffer to the pool unless one huge request
// grew it; pooled memory must stay small.
func (h *httpHandler) putBuffer(buf *bytes.Buffer) {
	const maxPooled = 4 << 20
	if buf.Cap() > maxPooled {
		return
	}
	buf.Reset()
	h.bufs.Put(buf)
}

func unmarshal(req ptraceotlp.ExportRequest, enc encoding, body []byte) *failure {
	var err error
	what := "protobuf"
	if enc == encJSON {
		what = "JSON"
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return notOTLP()
		}
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		return &failure{kind: failBadRequest, msg: "cannot decode the OTLP " + what + " body: " + err.Error(), err: err}
	}
	if enc == encJSON && req.Traces().ResourceSpans().Len() == 0 && !hasResourceSpans(body) {
		return notOTLP()
	}
	return nil
}

// notOTLP refuses a JSON body that is no export request: the decoder
// ignores unknown fields, so {"foo":1} would pass as an empty export.
func notOTLP() *failure {
	return fail(failBadRequest, "the JSON body is no OTLP export request: send an object with resourceSpans, "+
		`e.g. {"resourceSpans":[...]} (OTLP/JSON, ExportTraceServiceRequest)`)
}

// hasResourceSpans reports whether the JSON object body has the export
// request's field at its top level, in either of the names protobuf's
// JSON mapping accepts. It is asked only of bodies with no spans.
func hasResourceSpans(body []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	_, camel := top["resourceSpans"]
	_, snake := top["resource_spans"]
	return camel || snake
}
