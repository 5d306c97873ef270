package otlpreceiver

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// fixture is one captured request of the Weave TS compatibility run.
type fixture struct {
	Request struct {
		URLPath string            `json:"url_path"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"request"`
	RawBodyFile string `json:"raw_body_file"`
}

// otlpSpan is the part of an OTLP/JSON span the expectations read.
type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
}

func loadFixture(t *testing.T, name string) (fixture, []byte, map[string]otlpSpan) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	body := []byte(fx.Request.Body) // JSON exporters sent this document
	if fx.RawBodyFile != "" {
		if body, err = os.ReadFile(filepath.Join("testdata", fx.RawBodyFile)); err != nil {
			t.Fatal(err)
		}
	} else if fx.Request.Headers["content-encoding"] == "gzip" {
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = zb.Bytes()
	}
	var doc struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []otlpSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal(fx.Request.Body, &doc); err != nil {
		t.Fatal(err)
	}
	spans := map[string]otlpSpan{}
	for _, rs := range doc.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				spans[s.Name] = s
			}
		}
	}
	return fx, body, spans
}

// post sends body as the exporter did: chunked (no Content-Length), with
// the captured headers.
func post(t *testing.T, url string, headers map[string]string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		switch k {
		case "host", "connection", "transfer-encoding", "content-length":
		default:
			req.Header[http.CanonicalHeaderKey(k)] = []string{v}
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestTSClientFixtures(t *testing.T) {
	for _, name := range []string{
		"19-otel-protobuf-current.json", "20-otel-protobuf-legacy.json", "21-otel-json-current.json",
		"22-otel-json-legacy.json", "23-otel-protobuf-gzip.json", "24-otel-json-gzip.json",
	} {
		t.Run(name, func(t *testing.T) {
			fx, body, spans := loadFixture(t, name)
			rec := &recorder{}
			srv := httptest.NewServer(NewHTTPHandler(Config{}, testKeys(), rec, telemetry.Settings{}))
			defer srv.Close()
			resp := post(t, srv.URL+fx.Request.URLPath, fx.Request.Headers, body)
			respBody, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, respBody)
			}
			want := fx.Request.Headers["content-type"]
			if got := resp.Header.Get("Content-Type"); got != want {
				t.Errorf("response Content-Type %q, want the request's %q", got, want)
			}
			assertNoPartialSuccess(t, want, respBody)
			checkFixtureCalls(t, rec.byName(t), spans)
		})
	}
}

func assertNoPartialSuccess(t *testing.T, contentType string, body []byte) {
	t.Helper()
	resp := ptraceotlp.NewExportResponse()
	var err error
	if contentType == "application/json" {
		err = resp.UnmarshalJSON(body)
	} else {
		err = resp.UnmarshalProto(body)
	}
	if err != nil {
		t.Fatalf("response is not an ExportTraceServiceResponse: %v", err)
	}
	if n := resp.PartialSuccess().RejectedSpans(); n != 0 {
		t.Errorf("rejected %d spans: %s", n, resp.PartialSuccess().ErrorMessage())
	}
}

func checkFixtureCalls(t *testing.T, calls map[string]storage.Call, spans map[string]otlpSpan) {
	t.Helper()
	if len(calls) != 3 {
		t.Fatalf("got calls %v, want chat gpt-fake, tool.lookup, agent.run", keys(calls))
	}
	for name, s := range spans {
		c := calls[name]
		if c.ProjectID != "acme/demo" || c.ID != s.SpanID || c.TraceID != s.TraceID || c.ParentID != s.ParentSpanID {
			t.Errorf("%s: project %q id %q trace %q parent %q; span %+v", name, c.ProjectID, c.ID, c.TraceID, c.ParentID, s)
		}
		if c.WBUserID != "user-1" || c.EndedAt == nil || c.OtelDump == nil {
			t.Errorf("%s: user %q ended %v dump %d bytes", name, c.WBUserID, c.EndedAt, len(c.OtelDump))
		}
	}
	chat, tool, agent := calls["chat gpt-fake"], calls["tool.lookup"], calls["agent.run"]
	if agent.ParentID != "" || chat.ParentID != agent.ID || tool.ParentID != agent.ID {
		t.Errorf("tree: agent parent %q, chat parent %q, tool parent %q", agent.ParentID, chat.ParentID, tool.ParentID)
	}
	jsonIs(t, "chat inputs", chat.Inputs, `{"gen_ai.prompt":[{"role":"user","content":"capital of France?"}]}`)
	jsonIs(t, "chat output", chat.Output, `{"gen_ai.completion":[{"role":"assistant","content":"Paris"}]}`)
	jsonIs(t, "chat summary", chat.Summary, `{"usage":{"gpt-fake":{"input_tokens":12,"output_tokens":3,"total_tokens":15}}}`)
	jsonIs(t, "chat attributes", chat.Attributes,
		`{"system":"openai","model":"gpt-fake","model_parameters":{"model":"gpt-fake","temperature":0.2},"operation":"chat"}`)
	jsonIs(t, "tool inputs", tool.Inputs, `{"input.value":"France"}`)
	jsonIs(t, "agent inputs", agent.Inputs, `{"input.value":{"question":"capital of France?"}}`)
	jsonIs(t, "agent output", agent.Output, `{"output.value":"Paris"}`)
	jsonIs(t, "agent attributes", agent.Attributes, `{"kind":"AGENT"}`)
	if chat.Exception != nil || agent.Exception != nil {
		t.Errorf("successful spans carry exceptions %v %v", chat.Exception, agent.Exception)
	}
	if tool.Exception == nil || *tool.Exception != "lookup failed" {
		t.Errorf("tool exception = %v, want the status message", tool.Exception)
	}
	if chat.OpName != "chat gpt-fake" {
		t.Errorf("op = %q", chat.OpName)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func jsonIs(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s is not JSON: %v: %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s\nwant %s", what, got, want)
	}
}
