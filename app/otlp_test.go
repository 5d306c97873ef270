package app_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

// served is a weft that really listens, for clients that dial (gRPC).
type served struct {
	*env
	grpcAddr string
}

func newServed(t *testing.T, mutate ...func(*config.Config)) *served {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.OTLPGRPCListen = "127.0.0.1:0", "127.0.0.1:0"
	for _, m := range mutate {
		m(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	e := &env{t: t, url: srv.Scheme() + "://" + srv.Addr()}
	e.member = e.newKey(srv.Keys(), "acme", auth.RoleMember)
	return &served{env: e, grpcAddr: srv.GRPCAddr()}
}

// emitAgent records an agent span with an LLM child carrying GenAI usage
// and a failing tool child, with the real OpenTelemetry SDK.
func emitAgent(t *testing.T, exp sdktrace.SpanExporter, project string) {
	t.Helper()
	res := resource.NewSchemaless(attribute.String("service.name", "e2e"),
		attribute.String("wandb.entity", "acme"), attribute.String("wandb.project", project))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	tracer := tp.Tracer("weft-e2e")
	ctx, agent := tracer.Start(context.Background(), "agent.run")
	_, llm := tracer.Start(ctx, "chat gpt-4o")
	llm.SetAttributes(attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.Int("gen_ai.usage.input_tokens", 21), attribute.Int("gen_ai.usage.output_tokens", 4),
		attribute.String("gen_ai.input.messages", `[{"role":"user","content":"capital?"}]`))
	llm.End()
	_, tool := tracer.Start(ctx, "tool.lookup")
	tool.RecordError(errors.New("lookup failed"))
	tool.SetStatus(codes.Error, "lookup failed")
	tool.End()
	agent.End()
	flush, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tp.Shutdown(flush); err != nil {
		t.Fatalf("export: %v", err)
	}
}

func checkAgentCalls(t *testing.T, e *env, project string) {
	t.Helper()
	calls := e.stream(map[string]any{"project_id": "acme/" + project})
	if len(calls) != 3 {
		t.Fatalf("got %d calls, want 3", len(calls))
	}
	ops := byOp(calls)
	agent, llm, tool := ops["agent.run"], ops["chat gpt-4o"], ops["tool.lookup"]
	if llm.ParentID == nil || *llm.ParentID != agent.ID || tool.TraceID != agent.TraceID {
		t.Fatalf("parent links wrong: agent=%+v llm=%+v", agent, llm)
	}
	if u := llm.Summary.Usage["gpt-4o"]; u["prompt_tokens"]+u["input_tokens"] != 21 {
		t.Fatalf("usage = %v", llm.Summary.Usage)
	}
	if tool.Summary.Weave.Status != "error" || tool.Exception == nil {
		t.Fatalf("tool call = %+v", tool)
	}
	var stats struct {
		Count int `json:"count"`
	}
	q := map[string]any{"project_id": "acme/" + project, "query": map[string]any{"$expr": map[string]any{
		"$eq": []any{map[string]any{"$getField": "summary.weave.status"}, map[string]any{"$literal": "error"}}}}}
	e.ok("/calls/query_stats", q, &stats)
	if stats.Count != 1 {
		t.Fatalf("error calls = %d, want 1", stats.Count)
	}
}

func TestOTelSDKOverHTTPAndGRPC(t *testing.T) {
	s := newServed(t)
	httpExp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(s.url+"/otel/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"wandb-api-key": s.member}), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	emitAgent(t, httpExp, "http")
	checkAgentCalls(t, s.env, "http")

	grpcExp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(s.grpcAddr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": "Bearer " + s.member}), otlptracegrpc.WithCompressor("gzip"))
	if err != nil {
		t.Fatal(err)
	}
	emitAgent(t, grpcExp, "grpc")
	checkAgentCalls(t, s.env, "grpc")

	status, _, _ := s.do(http.MethodPost, "/otel/v1/traces", s.member, "garbage", "Content-Type", "application/x-protobuf")
	if status != http.StatusBadRequest {
		t.Fatalf("garbage protobuf = %d, want 400", status)
	}
}
