package inference

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
)

// cannedUpstream answers every request with one chat completion, in
// memory: what remains is the gateway's own work.
type cannedUpstream struct{ body []byte }

func (c cannedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: r}, nil
}

type discardCalls struct{}

func (discardCalls) Record(storage.Call) {}

// BenchmarkGatewayChat is one unstreamed chat request through the whole
// handler (authentication, limits, routing, cache, the upstream call in
// memory, the traced call), for a model balanced over three upstreams,
// uncached and answered from the cache.
func BenchmarkGatewayChat(b *testing.B) {
	answerBody := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"echo","choices":[{"index":0,"message":{"role":"assistant","content":"echo: lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":20,"completion_tokens":12,"total_tokens":32}}`)
	cfg := DefaultConfig()
	cfg.Providers = []catalog.ProviderConfig{{Name: "p", BaseURL: "http://upstream.invalid/v1"}}
	ups := []catalog.UpstreamConfig{{Provider: "p", Model: "a", Weight: 2}, {Provider: "p", Model: "b"}, {Provider: "p", Model: "c"}}
	cfg.Models = []catalog.ModelConfig{
		{ID: "bench", Upstreams: ups, Routing: catalog.Routing{Balance: catalog.BalanceWeighted}},
		{ID: "bench-cached", Upstreams: ups, Routing: catalog.Routing{Balance: catalog.BalanceLeastBusy, Cache: true}},
	}
	cat, err := catalog.New(cfg.Providers, cfg.Models, nil)
	if err != nil {
		b.Fatal(err)
	}
	keys := auth.NewFileStore(b.TempDir())
	k, secret, err := auth.NewKey("bench", auth.RoleMember, "u", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if err := keys.PutKey(context.Background(), k); err != nil {
		b.Fatal(err)
	}
	g, err := New(Options{Config: cfg, Catalog: cat, Keys: auth.StoreVerifier{Store: keys}, Recorder: discardCalls{},
		Inflight: httpapi.NewInflight(1 << 30), Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Transport: cannedUpstream{answerBody}})
	if err != nil {
		b.Fatal(err)
	}
	for _, model := range []string{"bench", "bench-cached"} {
		body := []byte(`{"model":"` + model + `","temperature":0,"max_tokens":64,"messages":[{"role":"user","content":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"}]}`)
		b.Run(model, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+secret)
				r.Header.Set("Service-Project", "bench/p")
				w := httptest.NewRecorder()
				g.chatCompletions(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
