package otlpreceiver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

// discard is a Submitter that accepts everything at no cost, so that the
// benchmark measures the receiver alone.
type discard struct{}

func (discard) ConsumeCalls(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	return make([]storage.CallOpResult, len(ops)), nil
}

// BenchmarkHTTPExport measures one OTLP/HTTP protobuf request of 512
// ~1 KB spans (an SDK batch) through authentication, decoding and mapping.
func BenchmarkHTTPExport(b *testing.B) {
	td := traces(512, "acme/bench")
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		a := spans.At(i).Attributes()
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutInt("gen_ai.usage.input_tokens", 120)
		a.PutInt("gen_ai.usage.output_tokens", 48)
		a.PutStr("gen_ai.prompt", `[{"role":"user","content":"`+strings.Repeat("lorem ", 75)+`"}]`)
		a.PutStr("gen_ai.completion", `[{"role":"assistant","content":"`+strings.Repeat("ipsum ", 75)+`"}]`)
	}
	body := protoBody(b, td)
	h := NewHTTPHandler(Config{}, testKeys(), discard{}, telemetry.Settings{})
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, TracesPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Wandb-Api-Key", fixtureKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "spans/s")
}
