package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// traces builds one resource per entry of projects ("" = no wandb
// attributes) with n spans each.
func traces(n int, projects ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	for ri, p := range projects {
		rs := td.ResourceSpans().AppendEmpty()
		if entity, project, ok := strings.Cut(p, "/"); ok {
			rs.Resource().Attributes().PutStr("wandb.entity", entity)
			rs.Resource().Attributes().PutStr("wandb.project", project)
		}
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range n {
			s := spans.AppendEmpty()
			s.SetName(fmt.Sprintf("op-%d", i))
			s.SetTraceID(pcommon.TraceID{1, byte(ri)})
			s.SetSpanID(pcommon.SpanID{2, byte(ri), byte(i)})
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_000, 0)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_800_000_001, 0)))
			s.Attributes().PutStr("input.value", "hi")
		}
	}
	return td
}

func protoBody(t testing.TB, td ptrace.Traces) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

type httpCase struct {
	name    string
	method  string
	header  map[string]string // added to a valid protobuf request's headers
	body    []byte            // nil = one valid span of acme/demo
	cfg     Config
	subErr  error
	verify  auth.Verifier
	status  int
	message string // a part of the google.rpc.Status message
}

func TestHTTPAnswers(t *testing.T) {
	valid := protoBody(t, traces(1, "acme/demo"))
	zlibbed := func() []byte {
		var b bytes.Buffer
		zw := zlib.NewWriter(&b)
		_, _ = zw.Write(valid)
		_ = zw.Close()
		return b.Bytes()
	}()
	tests := []httpCase{
		{name: "ok", status: 200},
		{name: "ok gzip", header: map[string]string{"Content-Encoding": "gzip"}, body: gzipped(valid), status: 200},
		{name: "ok deflate", header: map[string]string{"Content-Encoding": "deflate"}, body: zlibbed, status: 200},
		{name: "get", method: http.MethodGet, status: 405, message: "POST"},
		{name: "wrong content type", header: map[string]string{"Content-Type": "text/plain"}, status: 415, message: "application/x-protobuf"},
		{name: "no key", header: map[string]string{"Wandb-Api-Key": ""}, status: 401, message: "wandb-api-key"},
		{name: "unknown key", header: map[string]string{"Wandb-Api-Key": "nope"}, status: 401},
		{name: "key store down", verify: failingVerifier{}, status: 503},
		{name: "viewer cannot write", header: map[string]string{"Wandb-Api-Key": "viewer"}, status: 403, message: "role viewer"},
		{name: "other entity", body: protoBody(t, traces(1, "other/demo")), status: 403, message: "other"},
		{name: "garbage protobuf", body: []byte("\xff\xff\xff garbage"), status: 400, message: "protobuf"},
		{name: "garbage json", header: map[string]string{"Content-Type": "application/json"}, body: []byte("{nope"), status: 400, message: "JSON"},
		{name: "bad gzip", header: map[string]string{"Content-Encoding": "gzip"}, body: valid, status: 400, message: "gzip"},
		{name: "truncated gzip", header: map[string]string{"Content-Encoding": "gzip"}, body: gzipped(valid)[:20], status: 400},
		{name: "unknown encoding", header: map[string]string{"Content-Encoding": "br"}, status: 415, message: "br"},
		{name: "oversize", cfg: Config{MaxRequestBytes: 64}, status: 413, message: "64 bytes"},
		{name: "gzip bomb", cfg: Config{MaxRequestBytes: 4096}, header: map[string]string{"Content-Encoding": "gzip"},
			body: gzipped(make([]byte, 1<<20)), status: 413, message: "decompression"},
		{name: "too many spans", cfg: Config{MaxSpansPerRequest: 2}, body: protoBody(t, traces(3, "acme/demo")), status: 413, message: "3 spans"},
		{name: "no project", body: protoBody(t, traces(1, "")), status: 400, message: "wandb.entity"},
		{name: "bad project header", header: map[string]string{"Project_id": "nope"}, status: 400, message: "entity/project"},
		{name: "overloaded", subErr: consumer.ErrOverloaded, status: 429},
		{name: "stopping", subErr: consumer.ErrStopped, status: 503},
		{name: "storage rejects", subErr: fmt.Errorf("bad row: %w", storage.ErrInvalidArgument), status: 400, message: "bad row"},
		{name: "storage down", subErr: errors.New("disk on fire"), status: 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runHTTPCase(t, tc, valid) })
	}
}

func runHTTPCase(t *testing.T, tc httpCase, valid []byte) {
	rec := &recorder{err: tc.subErr}
	v := tc.verify
	if v == nil {
		v = testKeys()
	}
	h := NewHTTPHandler(tc.cfg, v, rec, telemetry.Settings{})
	body := tc.body
	if body == nil {
		body = valid
	}
	method := tc.method
	if method == "" {
		method = http.MethodPost
	}
	req := httptest.NewRequest(method, TracesPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Wandb-Api-Key", fixtureKey)
	for k, v := range tc.header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != tc.status {
		t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
	}
	if tc.status == 200 {
		if got := len(rec.snapshot()); got != 1 {
			t.Errorf("submitted %d parts, want 1", got)
		}
		return
	}
	if tc.status < 500 && tc.status != 429 && len(rec.snapshot()) != 0 {
		t.Error("a refused request must submit nothing")
	}
	st := decodeStatus(t, w)
	if !strings.Contains(st.GetMessage(), tc.message) {
		t.Errorf("message %q does not mention %q", st.GetMessage(), tc.message)
	}
	retry := w.Header().Get("Retry-After")
	if (tc.status == 429 || tc.status == 503) != (retry == "1") {
		t.Errorf("Retry-After = %q for status %d", retry, tc.status)
	}
}

// decodeStatus reads a google.rpc.Status body in the response encoding.
func decodeStatus(t *testing.T, w *httptest.ResponseRecorder) *spb.Status {
	t.Helper()
	st := &spb.Status{}
	body, _ := io.ReadAll(w.Body)
	var err error
	if w.Header().Get("Content-Type") == "application/json" {
		err = protojson.Unmarshal(body, st)
	} else {
		err = proto.Unmarshal(body, st)
	}
	if err != nil || st.GetCode() == 0 {
		t.Fatalf("body is not a google.rpc.Status (%v): %q", err, body)
	}
	return st
}

func TestPartialSuccess(t *testing.T) {
	td := traces(2, "acme/demo")
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).SetSpanID(pcommon.SpanID{})
	rec := &recorder{}
	h := NewHTTPHandler(Config{}, testKeys(), rec, telemetry.Settings{})
	js, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, TracesPathAlias, bytes.NewReader(js))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Basic YXBpOjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc=")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d type %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	resp := ptraceotlp.NewExportResponse()
	if err := resp.UnmarshalJSON(w.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
	ps := resp.PartialSuccess()
	if ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), `span "op-1"`) {
		t.Errorf("partial success = %d %q", ps.RejectedSpans(), ps.ErrorMessage())
	}
	if parts := rec.snapshot(); len(parts) != 1 || parts[0].Call.OpName != "op-0" {
		t.Errorf("submitted %v", parts)
	}
}

func TestProjectHeaderAndMultipleProjects(t *testing.T) {
	rec := &recorder{}
	h := NewHTTPHandler(Config{}, testKeys(), rec, telemetry.Settings{})
	send := func(td ptrace.Traces, header string) int {
		req := httptest.NewRequest(http.MethodPost, TracesPath, bytes.NewReader(protoBody(t, td)))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Wandb-Api-Key", fixtureKey)
		if header != "" {
			req.Header.Set("project_id", header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	// The header wins over the resources' projects and covers resources
	// without one.
	if code := send(traces(1, "other/x", ""), "acme/routed"); code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, p := range rec.snapshot() {
		if p.Call.ProjectID != "acme/routed" {
			t.Errorf("project %q, want the header's", p.Call.ProjectID)
		}
	}
	// Every project of a request must be writable: one forbidden project
	// refuses the whole request.
	before := len(rec.snapshot())
	if code := send(traces(1, "acme/a", "other/b"), ""); code != 403 || len(rec.snapshot()) != before {
		t.Errorf("status %d, submitted %d more", code, len(rec.snapshot())-before)
	}
	if code := send(traces(1, "acme/a", "acme/b", ""), ""); code != 200 || len(rec.snapshot()) != before+2 {
		t.Errorf("status %d, submitted %d more, want 2 with 1 rejected", code, len(rec.snapshot())-before)
	}
}

// TestJSONBodyMustBeOTLP: a JSON body that is no OTLP export request (no
// object, or none of its fields) is refused, not acknowledged as an
// empty export; an export with no spans is still one.
func TestJSONBodyMustBeOTLP(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"unknown fields only", `{"foo":1}`, 400},
		{"empty object", `{}`, 400},
		{"array", `[]`, 400},
		{"array of an export", `[{"resourceSpans":[]}]`, 400},
		{"string", `"resourceSpans"`, 400},
		{"number", `1`, 400},
		{"null", `null`, 400},
		{"field name in a value only", `{"foo":{"resourceSpans":[]}}`, 400},
		{"no spans", `{"resourceSpans":[]}`, 200},
		{"no spans, proto field name", `{"resource_spans":[]}`, 200},
		{"no spans and an unknown field", `{"resourceSpans":[],"extra":true}`, 200},
		{"null spans", `{"resourceSpans":null}`, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHTTPHandler(Config{}, testKeys(), &recorder{}, telemetry.Settings{})
			req := httptest.NewRequest(http.MethodPost, TracesPath, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Wandb-Api-Key", fixtureKey)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.status == 400 {
				if msg := decodeStatus(t, w).GetMessage(); !strings.Contains(msg, "resourceSpans") {
					t.Errorf("message %q does not name resourceSpans", msg)
				}
			}
		})
	}
}
