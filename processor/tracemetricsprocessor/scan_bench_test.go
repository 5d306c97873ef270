package tracemetricsprocessor

import (
	"encoding/json"
	"testing"

	"github.com/weftdev/weft/pricing"
)

func BenchmarkScanUsage(b *testing.B) {
	summary := []byte(`{"usage": {"gpt-4.1": {"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908, "requests": 1}}, "weave": {"status": "success"}}`)
	var buf []modelUsage
	b.ReportAllocs()
	for b.Loop() {
		buf = scanUsage(buf[:0], summary)
	}
}

// BenchmarkScanUsageEncodingJSON is the decoding scanUsage replaces, for
// comparison.
func BenchmarkScanUsageEncodingJSON(b *testing.B) {
	summary := []byte(`{"usage": {"gpt-4.1": {"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908, "requests": 1}}, "weave": {"status": "success"}}`)
	b.ReportAllocs()
	for b.Loop() {
		u := pricing.Usage(summary)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(u, &m)
		for _, raw := range m {
			var t pricing.Tokens
			t.Parse(raw)
		}
	}
}
