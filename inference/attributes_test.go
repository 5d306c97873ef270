package inference

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

// TestAttributesMatchEncodingJSON: the hand-written encoding is byte for
// byte what json.Marshal writes for the same attributes.
func TestAttributesMatchEncodingJSON(t *testing.T) {
	served := &catalog.Upstream{Provider: &catalog.Provider{Name: "local"}, Model: "llama<3>"}
	tests := []struct {
		name string
		ex   exchange
	}{
		{"refused before any upstream", exchange{endpoint: "/v1/chat/completions", modelID: "m", status: 404}},
		{"served after a failover", exchange{endpoint: "/v1/chat/completions", modelID: "org/m\"é", stream: true, status: 200,
			served: served, firstByte: 1234567 * time.Nanosecond, attempts: []attempt{
				{Provider: "down", Model: "x", Error: "dial tcp: connection refused\n", DurationMS: 0.000_000_5},
				{Provider: "local", Model: "llama<3>", Status: 200, DurationMS: 12.5},
			}}},
		{"truncated and closed", exchange{endpoint: "/completions/create", modelID: "m", status: 499,
			truncatedOutput: true, clientClosedEarly: true, firstByte: time.Hour * 1e5,
			attempts: []attempt{{Provider: "p", Model: "m", Status: 503, DurationMS: 3e21}}}},
		{"no provider name", exchange{endpoint: "/v1/chat/completions", modelID: "m", status: 200,
			served: &catalog.Upstream{Provider: &catalog.Provider{}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := inferenceAttributes{Endpoint: tc.ex.endpoint, Model: tc.ex.modelID, Stream: tc.ex.stream, StatusCode: tc.ex.status,
				Attempts: tc.ex.attempts, TTFTMillis: float64(tc.ex.firstByte.Microseconds()) / 1000,
				OutputTruncated: tc.ex.truncatedOutput, ClientClosed: tc.ex.clientClosedEarly}
			if tc.ex.served != nil {
				a.Provider, a.UpstreamModel = tc.ex.served.Provider.Name, tc.ex.served.Model
			}
			want, _ := json.Marshal(struct {
				Inference inferenceAttributes `json:"inference"`
			}{a})
			if got := tc.ex.attributes(); string(got) != string(want) {
				t.Fatalf("attributes %s\nwant       %s", got, want)
			}
		})
	}
}
