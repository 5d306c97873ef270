package inference

import (
	"testing"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

// BenchmarkPlainExchange is the gateway's own work on one unstreamed
// request, without the network: reading the request, the upstream's body,
// checking the answer and rendering the traced call.
func BenchmarkPlainExchange(b *testing.B) {
	body := []byte(`{"model":"bench-echo","stream":false,"max_tokens":64,"messages":[{"role":"user","content":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation"}]}`)
	answerBody := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"echo","choices":[{"index":0,"message":{"role":"assistant","content":"echo: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":20,"completion_tokens":12,"total_tokens":32}}`)
	g := &Gateway{now: time.Now}
	up := catalog.Upstream{Provider: &catalog.Provider{Name: "bench"}, Model: "echo"}
	for b.Loop() {
		fields, e := decodeObject(body)
		if e != nil {
			b.Fatal(e)
		}
		req, e := parseChatRequest(fields)
		if e != nil {
			b.Fatal(e)
		}
		_ = req.upstreamBody(up.Model)
		ex := newExchange(opChatCompletions, "/v1/chat/completions", "bench/inference", "u", time.Now())
		ex.inputs, ex.modelID, ex.served = body, req.model, &up
		ex.attempts = append(ex.attempts, attempt{Provider: "bench", Model: "echo", Status: 200, DurationMS: 0.3})
		if _, _, e := g.plainAnswer(ex, &answer{status: 200, body: answerBody}); e != nil {
			b.Fatal(e)
		}
		_ = ex.call(time.Now())
	}
}
