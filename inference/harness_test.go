package inference

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/syncbuf"
	"github.com/weftdev/weft/storage"
)

const upstreamKey = "sk-upstream-secret"

// callSink is a Recorder keeping what it is given.
type callSink struct {
	mu    sync.Mutex
	calls []storage.Call
	// onRecord, when set, runs as each call is recorded.
	onRecord func(storage.Call)
}

func (s *callSink) Record(c storage.Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onRecord != nil {
		s.onRecord(c)
	}
	s.calls = append(s.calls, c)
}

func (s *callSink) all() []storage.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]storage.Call(nil), s.calls...)
}

// harness is a gateway in front of a fake upstream, with keys of every
// kind and the calls it traced.
type harness struct {
	t                                  *testing.T
	url                                string
	up                                 *upstreamtest.Server
	calls                              *callSink
	logs                               *syncbuf.Buffer
	registry                           *prometheus.Registry
	key, viewerKey, rivalKey, adminKey string
	keys                               auth.KeyStore
	inflight                           *httpapi.Inflight
	gw                                 *Gateway
	clock                              *testClock // the gateway's clock
}

func model(id string, status string, ups ...catalog.UpstreamConfig) catalog.ModelConfig {
	return catalog.ModelConfig{ID: id, Upstreams: ups, Status: status,
		Prices: catalog.Prices{InputPerMillion: 1, OutputPerMillion: 2}}
}

func on(provider, upstreamModel string) catalog.UpstreamConfig {
	return catalog.UpstreamConfig{Provider: provider, Model: upstreamModel}
}

func testGatewayConfig(t *testing.T, up *upstreamtest.Server) Config {
	cfg := DefaultConfig()
	cfg.StreamIdleTimeout = 300 * time.Millisecond
	cfg.MaxRequestBytes = 4096
	cfg.RetryAfter = 2 * time.Second
	cfg.ProjectConcurrency = map[string]int{"acme/limited": 1}
	cfg.Providers = []catalog.ProviderConfig{
		{Name: "up", BaseURL: up.BaseURL(), APIKeyEnv: "UP_KEY"},
		{Name: "impatient", BaseURL: up.BaseURL(), APIKeyEnv: "UP_KEY", Timeout: 200 * time.Millisecond},
		{Name: "down", BaseURL: upstreamtest.DeadURL(t)},
	}
	cfg.Models = []catalog.ModelConfig{
		model("echo-model", "", on("up", "echo")),
		model("meta-llama/Llama-3.1-8B-Instruct", catalog.StatusDeprecated, on("up", "echo-llama")),
		model("reasoner", "", on("up", "reasoner-1")),
		model("failover", "", on("down", "echo"), on("up", "fail-500"), on("up", "echo-second")),
		model("broken", "", on("up", "fail-500")),
		model("overloaded", "", on("up", "fail-503")),
		model("unreachable", "", on("down", "echo")),
		model("refuses", "", on("up", "fail-400")),
		model("slow", "", on("impatient", "slow")),
		model("midstream", "", on("up", "midstream-error")),
		model("cut", "", on("up", "cut")),
		model("hold", "", on("up", "hold")),
		model("silent", "", on("up", "silent")),
		model("old", catalog.StatusRetired, on("up", "echo")),
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newHarness builds the harness; mutate changes the gateway's config.
func newHarness(t *testing.T, mutate ...func(*Config)) *harness {
	t.Helper()
	up := upstreamtest.New(upstreamtest.Options{Key: upstreamKey, Delay: 2 * time.Second, HoldInterval: 20 * time.Millisecond, Record: true})
	t.Cleanup(up.Close)
	cfg := testGatewayConfig(t, up)
	for _, m := range mutate {
		m(&cfg)
	}
	cat, err := catalog.New(cfg.Providers, cfg.Models, func(k string) string { return map[string]string{"UP_KEY": upstreamKey}[k] })
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, up: up, calls: &callSink{}, logs: &syncbuf.Buffer{}, registry: prometheus.NewRegistry(), inflight: httpapi.NewInflight(1 << 20)}
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	keys := auth.NewFileStore(t.TempDir())
	verifier := auth.StoreVerifier{Store: keys}
	gw, err := New(Options{Config: cfg, Catalog: cat, Keys: verifier, Recorder: h.calls,
		Inflight: h.inflight, Registry: h.registry, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	h.clock = &testClock{}
	gw.now = h.clock.now
	mux := http.NewServeMux()
	gw.Register(mux, func(next http.Handler) http.Handler { return httpapi.Authenticate(verifier, logger, next) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h.url, h.keys, h.gw = srv.URL, keys, gw
	h.key = h.newKey(keys, "acme", auth.RoleMember)
	h.viewerKey = h.newKey(keys, "acme", auth.RoleViewer)
	h.rivalKey = h.newKey(keys, "rival", auth.RoleAdmin)
	h.adminKey = h.newKey(keys, auth.AllEntities, auth.RoleAdmin)
	t.Cleanup(func() { h.checkNoSecretsLogged() })
	return h
}

func (h *harness) newKey(store auth.KeyStore, entity string, role auth.Role) string {
	k, secret, err := auth.NewKey(entity, role, "user-"+entity+"-"+string(role), time.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	if err := store.PutKey(context.Background(), k); err != nil {
		h.t.Fatal(err)
	}
	return secret
}

func (h *harness) checkNoSecretsLogged() {
	logs := h.logs.String()
	for _, secret := range []string{upstreamKey, h.key, h.viewerKey, h.rivalKey, h.adminKey} {
		if strings.Contains(logs, secret) {
			h.t.Errorf("a secret reached the log:\n%s", logs)
		}
	}
}

// do sends a request with the member key (unless headers set another
// Authorization) and returns the response, body unread.
func (h *harness) do(method, path string, body any, headers map[string]string) *http.Response {
	h.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, h.url+path, r)
	req.Header.Set("Authorization", "Bearer "+h.key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// chat posts a chat request and returns status, headers and body.
func (h *harness) chat(body any, headers map[string]string) (int, http.Header, []byte) {
	h.t.Helper()
	resp := h.do(http.MethodPost, "/v1/chat/completions", body, headers)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

// waitCall waits for the traced call with id.
func (h *harness) waitCall(id string) storage.Call {
	h.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, c := range h.calls.all() {
			if c.ID == id {
				return c
			}
		}
	}
	h.t.Fatalf("call %s was not traced; traced: %d calls", id, len(h.calls.all()))
	return storage.Call{}
}

func msg(model, text string, extra map[string]any) map[string]any {
	b := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": text}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// sseData reads every data payload of a stream.
func sseData(t *testing.T, body io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func field(t *testing.T, raw []byte, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}
