package otlpreceiver

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
)

// emitAgentTrace records, with the real SDK, an agent span with an LLM
// child (GenAI attributes) and a failing tool child (error status and a
// recorded exception), then flushes through exp.
func emitAgentTrace(t *testing.T, exp sdktrace.SpanExporter) {
	t.Helper()
	res := resource.NewSchemaless(
		attribute.String("service.name", "sdk-test"),
		attribute.String("wandb.entity", "acme"),
		attribute.String("wandb.project", "sdk"),
	)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	tracer := tp.Tracer("weft-test")
	ctx, agent := tracer.Start(context.Background(), "agent.run")
	agent.SetAttributes(attribute.String("input.value", `{"question":"capital?"}`), attribute.String("output.value", "Paris"))

	_, llm := tracer.Start(ctx, "chat gpt-4o")
	llm.SetAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String("gen_ai.response.model", "gpt-4o-2024-08-06"),
		attribute.Int("gen_ai.usage.input_tokens", 21),
		attribute.Int("gen_ai.usage.output_tokens", 4),
		attribute.String("gen_ai.input.messages", `[{"role":"user","content":"capital?"}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","content":"Paris"}]`),
	)
	llm.End()

	_, tool := tracer.Start(ctx, "tool.lookup")
	tool.RecordError(errors.New("lookup failed (on purpose)"))
	tool.SetStatus(codes.Error, "")
	tool.End()
	agent.End()

	flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tp.Shutdown(flushCtx); err != nil {
		t.Fatalf("export failed: %v", err)
	}
}

func checkAgentTrace(t *testing.T, rec *recorder) {
	t.Helper()
	calls := rec.byName(t)
	agent, llm, tool := calls["agent.run"], calls["chat gpt-4o"], calls["tool.lookup"]
	if len(calls) != 3 || agent.ID == "" || llm.ParentID != agent.ID || tool.ParentID != agent.ID || agent.ParentID != "" {
		t.Fatalf("calls %v: agent %q, llm parent %q, tool parent %q", keys(calls), agent.ID, llm.ParentID, tool.ParentID)
	}
	if llm.TraceID != agent.TraceID || len(llm.TraceID) != 32 || len(llm.ID) != 16 {
		t.Errorf("ids: trace %q/%q, id %q", llm.TraceID, agent.TraceID, llm.ID)
	}
	for _, c := range calls {
		if c.ProjectID != "acme/sdk" || c.WBUserID != "user-1" {
			t.Errorf("%s: project %q user %q", c.OpName, c.ProjectID, c.WBUserID)
		}
	}
	jsonIs(t, "llm summary", llm.Summary,
		`{"usage":{"gpt-4o-2024-08-06":{"input_tokens":21,"output_tokens":4,"total_tokens":25}}}`)
	jsonIs(t, "llm inputs", llm.Inputs, `{"gen_ai.input.messages":[{"role":"user","content":"capital?"}]}`)
	jsonIs(t, "llm output", llm.Output, `{"gen_ai.output.messages":[{"role":"assistant","content":"Paris"}]}`)
	jsonIs(t, "agent inputs", agent.Inputs, `{"input.value":{"question":"capital?"}}`)
	if llm.Exception != nil || agent.Exception != nil {
		t.Error("successful spans must not carry an exception")
	}
	if tool.Exception == nil || *tool.Exception != "*errors.errorString: lookup failed (on purpose)" {
		t.Errorf("tool exception = %v, want the recorded exception", tool.Exception)
	}
}

func TestSDKExporterHTTP(t *testing.T) {
	for _, gz := range []bool{false, true} {
		rec := &recorder{}
		srv := httptest.NewServer(NewHTTPHandler(Config{}, testKeys(), rec, telemetry.Settings{}))
		opts := []otlptracehttp.Option{
			otlptracehttp.WithEndpointURL(srv.URL + TracesPath),
			otlptracehttp.WithHeaders(map[string]string{"wandb-api-key": fixtureKey}),
		}
		if gz {
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		}
		exp, err := otlptracehttp.New(context.Background(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		emitAgentTrace(t, exp)
		checkAgentTrace(t, rec)
		srv.Close()
	}
}

// startGRPC serves the receiver on a loopback port.
func startGRPC(t *testing.T, cfg Config, rec *recorder) string {
	t.Helper()
	return serveGRPC(t, cfg, rec, nil)
}

// serveGRPC serves the receiver on a loopback port with a request-bytes
// budget (nil: none) and extra server options.
func serveGRPC(t *testing.T, cfg Config, rec *recorder, inflight *httpapi.Inflight, opts ...grpc.ServerOption) string {
	t.Helper()
	srv, err := NewGRPCServer(cfg, testKeys(), rec, telemetry.Settings{}, inflight, opts...)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func TestSDKExporterGRPC(t *testing.T) {
	rec := &recorder{}
	addr := startGRPC(t, Config{}, rec)
	exp, err := otlptracegrpc.New(context.Background(),
		otlptracegrpc.WithEndpoint(addr),
		otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithCompressor("gzip"),
		otlptracegrpc.WithHeaders(map[string]string{"wandb-api-key": fixtureKey}),
	)
	if err != nil {
		t.Fatal(err)
	}
	emitAgentTrace(t, exp)
	checkAgentTrace(t, rec)
}
