package otlpreceiver

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/telemetry"
)

func grpcClient(t *testing.T, addr string) ptraceotlp.GRPCClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return ptraceotlp.NewGRPCClient(cc)
}

func TestGRPCAnswers(t *testing.T) {
	tests := []struct {
		name   string
		md     []string // metadata pairs
		td     ptrace.Traces
		cfg    Config
		subErr error
		code   codes.Code
		retry  bool
	}{
		{name: "ok", md: []string{"wandb-api-key", fixtureKey}, code: codes.OK},
		{name: "basic auth and project metadata", md: []string{
			"authorization", "Basic YXBpOjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc=",
			"project_id", "acme/legacy"}, td: traces(1, ""), code: codes.OK},
		{name: "no key", code: codes.Unauthenticated},
		{name: "forbidden", md: []string{"wandb-api-key", "viewer"}, code: codes.PermissionDenied},
		{name: "no project", md: []string{"wandb-api-key", fixtureKey}, td: traces(1, ""), code: codes.InvalidArgument},
		{name: "too many spans", md: []string{"wandb-api-key", fixtureKey}, cfg: Config{MaxSpansPerRequest: 1},
			td: traces(2, "acme/demo"), code: codes.ResourceExhausted},
		{name: "message too large", md: []string{"wandb-api-key", fixtureKey}, cfg: Config{MaxRequestBytes: 32},
			code: codes.ResourceExhausted},
		{name: "overloaded", md: []string{"wandb-api-key", fixtureKey}, subErr: consumer.ErrOverloaded,
			code: codes.ResourceExhausted, retry: true},
		{name: "stopping", md: []string{"wandb-api-key", fixtureKey}, subErr: consumer.ErrStopped,
			code: codes.Unavailable, retry: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{err: tc.subErr}
			client := grpcClient(t, startGRPC(t, tc.cfg, rec))
			td := tc.td
			if td == (ptrace.Traces{}) {
				td = traces(1, "acme/demo")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ctx = metadata.AppendToOutgoingContext(ctx, tc.md...)
			_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
			st, _ := status.FromError(err)
			if st.Code() != tc.code {
				t.Fatalf("code %v (%v), want %v", st.Code(), err, tc.code)
			}
			if hasRetryInfo(st) != tc.retry {
				t.Errorf("RetryInfo present = %v, want %v", !tc.retry, tc.retry)
			}
			if tc.code == codes.OK && len(rec.snapshot()) != td.SpanCount() {
				t.Errorf("submitted %d parts for %d spans", len(rec.snapshot()), td.SpanCount())
			}
		})
	}
}

func hasRetryInfo(st *status.Status) bool {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().AsDuration() == time.Second {
			return true
		}
	}
	return false
}

func TestGRPCPartialSuccess(t *testing.T) {
	rec := &recorder{}
	client := grpcClient(t, startGRPC(t, Config{}, rec))
	td := traces(3, "acme/demo")
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(2).SetTraceID(pcommon.TraceID{})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "wandb-api-key", fixtureKey)
	resp, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		t.Fatal(err)
	}
	ps := resp.PartialSuccess()
	if ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), "trace_id") || len(rec.snapshot()) != 2 {
		t.Errorf("partial %d %q, submitted %d", ps.RejectedSpans(), ps.ErrorMessage(), len(rec.snapshot()))
	}
}

func TestNewGRPCServerValidatesConfig(t *testing.T) {
	_, err := NewGRPCServer(Config{MaxSpansPerRequest: -1}, testKeys(), &recorder{}, telemetry.Settings{}, nil)
	if err == nil || !strings.Contains(err.Error(), "max_spans_per_request") {
		t.Errorf("err = %v, want a config error", err)
	}
}

// Decoded gRPC requests share the listener's budget of bytes held at once:
// with it spent, an export is refused for now, with RetryInfo.
func TestGRPCRequestOverTheInflightBudgetIsRetryable(t *testing.T) {
	budget := httpapi.NewInflight(1 << 20)
	client := grpcClient(t, serveGRPC(t, Config{}, &recorder{}, budget))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "wandb-api-key", fixtureKey)
	release, ok := budget.Reserve(1 << 20) // another request holds the whole budget
	if !ok {
		t.Fatal("could not take the budget")
	}
	_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(traces(1, "acme/demo")))
	if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !hasRetryInfo(st) {
		t.Fatalf("export with the budget spent: %v, want RESOURCE_EXHAUSTED with RetryInfo", err)
	}
	release()
	if _, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(traces(1, "acme/demo"))); err != nil {
		t.Fatalf("export after the budget was released: %v", err)
	}
}
