package otlpreceiver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/weftdev/weft/internal/telemetry"
)

// tracesRecorder is a consumer.Traces that keeps what it is handed.
type tracesRecorder struct {
	mu      sync.Mutex
	headers []string
	spans   []string // span ids
}

func (r *tracesRecorder) ConsumeTraces(_ context.Context, project string, td ptrace.Traces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, project)
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			for k := range sss.At(j).Spans().Len() {
				r.spans = append(r.spans, sss.At(j).Spans().At(k).SpanID().String())
			}
		}
	}
	return nil
}

// forwardRequest is an OTLP request with one span per id, in the resource
// project acme/<project> when given; a zero id is left empty.
func forwardRequest(project string, ids ...byte) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	if project != "" {
		rs.Resource().Attributes().PutStr("wandb.entity", "acme")
		rs.Resource().Attributes().PutStr("wandb.project", project)
	}
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for _, id := range ids {
		s := spans.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{9})
		if id != 0 {
			s.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, id})
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	}
	body, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	return body
}

// TestForwardingHandlerChecksAndHandsOnOTLP: the agent's OTLP receiver
// hands spans on as OTLP, refusing here what the center would refuse.
func TestForwardingHandlerChecksAndHandsOnOTLP(t *testing.T) {
	cases := []struct {
		name     string
		header   string
		key      string
		body     []byte
		status   int
		rejected int64
		spans    int
	}{
		{"resource project", "", fixtureKey, forwardRequest("app", 1, 2), http.StatusOK, 0, 2},
		{"header project", "acme/h", fixtureKey, forwardRequest("", 1), http.StatusOK, 0, 1},
		{"a span without id is refused alone", "", fixtureKey, forwardRequest("app", 1, 0, 3), http.StatusOK, 1, 2},
		{"no project", "", fixtureKey, forwardRequest("", 1), http.StatusBadRequest, 0, 0},
		{"malformed project header", "acme", fixtureKey, forwardRequest("", 1), http.StatusBadRequest, 0, 0},
		{"other entity", "other/p", fixtureKey, forwardRequest("", 1), http.StatusForbidden, 0, 0},
		{"no key", "", "", forwardRequest("app", 1), http.StatusUnauthorized, 0, 0},
		{"not protobuf", "", fixtureKey, []byte("\xff\xff"), http.StatusBadRequest, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &tracesRecorder{}
			srv := httptest.NewServer(NewForwardingHTTPHandler(NewDefaultConfig(), testKeys(), rec, telemetry.NopSettings(ReceiverType)))
			defer srv.Close()
			headers := map[string]string{"content-type": "application/x-protobuf"}
			if tc.key != "" {
				headers["wandb-api-key"] = tc.key
			}
			if tc.header != "" {
				headers["project_id"] = tc.header
			}
			resp := post(t, srv.URL+TracesPath, headers, tc.body)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, tc.status)
			}
			if len(rec.spans) != tc.spans || (tc.spans > 0 && rec.headers[0] != tc.header) {
				t.Fatalf("handed on %d spans under header %v, want %d under %q", len(rec.spans), rec.headers, tc.spans, tc.header)
			}
			if tc.status != http.StatusOK {
				return
			}
			out := ptraceotlp.NewExportResponse()
			if err := out.UnmarshalProto(body); err != nil || out.PartialSuccess().RejectedSpans() != tc.rejected {
				t.Fatalf("partial success rejected %d (%v), want %d", out.PartialSuccess().RejectedSpans(), err, tc.rejected)
			}
		})
	}
}
