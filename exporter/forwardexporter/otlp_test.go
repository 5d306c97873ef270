package forwardexporter

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/storage"
)

// traces is one OTLP request: n spans of one resource, the first id
// given; id 0 leaves a span without an id, which no center can map.
func traces(resourceProject string, first byte, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	if entity, project, ok := strings.Cut(resourceProject, "/"); ok {
		rs.Resource().Attributes().PutStr("wandb.entity", entity)
		rs.Resource().Attributes().PutStr("wandb.project", project)
	}
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		s := spans.AppendEmpty()
		s.SetName("llm")
		s.SetTraceID(pcommon.TraceID{1})
		if first != 0 {
			s.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, first + byte(i)})
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	}
	return td
}

// TestOTLPIsForwardedToTheCenterOTLPEndpoint buffers OTLP requests and
// checks that a center's real OTLP receiver maps every span, placed by the
// forwarded project header or by its resource, and that spans the center
// cannot map are counted as rejected.
func TestOTLPIsForwardedToTheCenterOTLPEndpoint(t *testing.T) {
	up := newWeaveUpstream(t)
	keys, secret := memberKey(t)
	up.srv.Config.Handler = otlpreceiver.NewHTTPHandler(otlpreceiver.NewDefaultConfig(), auth.StoreVerifier{Store: keys},
		consumerFunc(func(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
			up.mu.Lock()
			defer up.mu.Unlock()
			up.ops = append(up.ops, ops...)
			return make([]storage.CallOpResult, len(ops)), nil
		}), testSettings(t))
	set := testSettings(t)
	cfg := testConfig(t.TempDir(), up.srv.URL)
	e, err := New(set, cfg, NewWeaveSink(up.srv.URL, &http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	ctx := WithKey(context.Background(), secret)
	requests := []struct {
		header string
		td     ptrace.Traces
	}{
		{"acme/header", traces("", 1, 3)},
		{"acme/header", traces("", 4, 3)}, // may travel in one request with the one before
		{"", traces("acme/resource", 10, 2)},
		{"", traces("acme/resource", 0, 1)}, // unmappable at the center
	}
	for _, r := range requests {
		if err := e.ConsumeTraces(ctx, r.header, r.td); err != nil {
			t.Fatal(err)
		}
	}
	waitDrained(t, e)
	byProject := map[string]int{}
	for _, op := range up.received() {
		if op.Part == nil || op.Part.Kind != storage.PartComplete {
			t.Fatalf("center received %+v, want complete calls", op)
		}
		byProject[op.ProjectID()]++
	}
	if byProject["acme/header"] != 6 || byProject["acme/resource"] != 2 || len(byProject) != 2 {
		t.Fatalf("center mapped %v, want 6 calls in acme/header and 2 in acme/resource", byProject)
	}
	var rejected dto.Metric
	if err := set.Metrics.StorageRejectedOps.WithLabelValues("upstream").Write(&rejected); err != nil || rejected.GetCounter().GetValue() != 1 {
		t.Fatalf("rejected spans counted = %v (%v), want 1", rejected.GetCounter().GetValue(), err)
	}
}
