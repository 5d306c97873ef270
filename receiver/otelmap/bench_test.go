package otelmap

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// llmTraces builds n LLM-like spans whose prompt and completion together
// hold about payload bytes, as an OTel GenAI instrumentation sends them.
func llmTraces(n, payload int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench")
	rs.Resource().Attributes().PutStr("wandb.entity", "acme")
	rs.Resource().Attributes().PutStr("wandb.project", "bench")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	text := strings.Repeat("lorem ipsum ", payload/24)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		s := spans.AppendEmpty()
		s.SetName("chat gpt-4o")
		s.SetTraceID(pcommon.TraceID{1, byte(i >> 8), byte(i)})
		s.SetSpanID(pcommon.SpanID{2, byte(i >> 8), byte(i)})
		s.SetParentSpanID(pcommon.SpanID{3})
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
		a := s.Attributes()
		a.PutStr("gen_ai.system", "openai")
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutDouble("gen_ai.request.temperature", 0.2)
		a.PutInt("gen_ai.request.max_tokens", 512)
		a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
		a.PutStr("gen_ai.response.id", "chatcmpl-123")
		a.PutInt("gen_ai.usage.input_tokens", 120)
		a.PutInt("gen_ai.usage.output_tokens", 48)
		a.PutStr("gen_ai.prompt", fmt.Sprintf(`[{"role":"system","content":"be brief"},{"role":"user","content":%q}]`, text))
		a.PutStr("gen_ai.completion", fmt.Sprintf(`[{"role":"assistant","content":%q}]`, text))
		a.PutStr("server.address", "api.openai.com")
	}
	return td
}

func BenchmarkMapSpans(b *testing.B) {
	const spans = 100
	for _, size := range []struct {
		name    string
		payload int
	}{{"1KB", 600}, {"6KB", 5600}} {
		td := llmTraces(spans, size.payload)
		wire, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			b.Fatal(err)
		}
		m := NewMapper(Options{MaxAttributeValueBytes: 1 << 20})
		b.Run(fmt.Sprintf("%s/%dB-per-span", size.name, len(wire)/spans), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(wire)))
			for b.Loop() {
				if res := m.Map(td, Input{WBUserID: "u"}); len(res.Parts) != spans {
					b.Fatalf("mapped %d spans", len(res.Parts))
				}
			}
			b.ReportMetric(float64(spans*b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
