package inference

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

// flakyUpstream is a second upstream in front of the harness's fake: it
// answers 503 while failing (with Retry-After-Ms when set) and passes
// requests to the fake otherwise.
type flakyUpstream struct {
	*httptest.Server
	failing    atomic.Bool
	failNext   atomic.Int64 // fail this many requests, then recover
	retryAfter atomic.Int64 // a time.Duration
	served     atomic.Int64
	target     atomic.Pointer[http.Handler]
}

func newFlakyUpstream(t *testing.T) *flakyUpstream {
	f := &flakyUpstream{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.served.Add(1)
		if f.failing.Load() || f.failNext.Add(-1) >= 0 {
			if d := time.Duration(f.retryAfter.Load()); d > 0 {
				w.Header().Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
			return
		}
		(*f.target.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// newRoutingHarness is the harness with the flaky upstream as provider
// "flaky", models, and short retry and breaker settings: the breaker
// opens after breakerFailures; tune, when not nil, changes the rest.
func newRoutingHarness(t *testing.T, breakerFailures int, tune func(*Config), models ...catalog.ModelConfig) (*harness, *flakyUpstream) {
	t.Helper()
	f := newFlakyUpstream(t)
	h := newHarness(t, func(c *Config) {
		c.Providers = append(c.Providers, catalog.ProviderConfig{Name: "flaky", BaseURL: f.URL + "/v1", APIKeyEnv: "UP_KEY"})
		c.Models = append(c.Models, models...)
		c.Retry.Backoff, c.Retry.MaxBackoff = 5*time.Millisecond, 20*time.Millisecond
		c.Breaker.Failures, c.Breaker.CoolDown = breakerFailures, 300*time.Millisecond
		if tune != nil {
			tune(c)
		}
	})
	handler := h.up.Config.Handler
	f.target.Store(&handler)
	return h, f
}

// attemptsOf reads a traced call's attempts.
func attemptsOf(t *testing.T, h *harness, header http.Header) []attempt {
	t.Helper()
	var attrs struct{ Inference struct{ Attempts []attempt } }
	if err := json.Unmarshal(h.waitCall(header.Get(callIDHeader)).Attributes, &attrs); err != nil {
		t.Fatal(err)
	}
	return attrs.Inference.Attempts
}

func describeAttempts(a []attempt) string {
	var parts []string
	for _, at := range a {
		parts = append(parts, at.Provider+"/"+at.Model+":"+strconv.Itoa(at.Status))
	}
	return strings.Join(parts, " ")
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	h, f := newRoutingHarness(t, 10, nil, model("retried", "", on("flaky", "echo-flaky")))
	const retryAfter = 150 * time.Millisecond
	f.retryAfter.Store(int64(retryAfter))
	f.failNext.Store(1)
	start := time.Now()
	status, header, body := h.chat(msg("retried", "hi", nil), nil)
	if status != 200 || !strings.Contains(string(body), "echo: hi") {
		t.Fatalf("status %d: %s", status, body)
	}
	if took := time.Since(start); took < retryAfter {
		t.Errorf("answered after %v: the upstream's Retry-After (%v) was not waited", took, retryAfter)
	}
	if a := attemptsOf(t, h, header); describeAttempts(a) != "flaky/echo-flaky:503 flaky/echo-flaky:200" {
		t.Errorf("attempts: %s", describeAttempts(a))
	}
	for name, want := range map[string]float64{"weft_inference_upstream_requests": 2, "weft_inference_upstream_retries": 1,
		"weft_inference_upstream_attempt_failures": 1, "weft_inference_upstream_in_flight": 0} {
		if got := metricValue(t, h, name, "flaky"); got != want {
			t.Errorf("%s{provider=flaky} = %v, want %v", name, got, want)
		}
	}
}

func TestRetriesAreBounded(t *testing.T) {
	h, f := newRoutingHarness(t, 10, nil, model("retried", "", on("flaky", "echo-flaky")))
	f.failing.Store(true)
	status, header, body := h.chat(msg("retried", "hi", nil), nil)
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("status %d, Retry-After %q: %s", status, header.Get("Retry-After"), body)
	}
	// One attempt and inference.retry.max_retries (2) more.
	if got := f.served.Load(); got != 3 {
		t.Errorf("the upstream was tried %d times, want 3", got)
	}
	// A Retry-After longer than inference.retry.max_retry_after ends the
	// retries at once.
	f.retryAfter.Store(int64(time.Minute))
	f.served.Store(0)
	if status, _, _ := h.chat(msg("retried", "hi", nil), nil); status != http.StatusServiceUnavailable || f.served.Load() != 1 {
		t.Errorf("with a long Retry-After: status %d after %d attempts, want 503 after 1", status, f.served.Load())
	}
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	h, f := newRoutingHarness(t, 2, nil, model("guarded", "", on("flaky", "echo-flaky"), on("up", "echo-backup")))
	f.failing.Store(true)
	breakerState := func() float64 { return metricValue(t, h, "weft_inference_upstream_breaker_state", "flaky") }
	// Two failing requests fail over to the backup and open the breaker.
	for i := range 2 {
		status, header, body := h.chat(msg("guarded", "hi", nil), nil)
		if status != 200 || !strings.Contains(string(body), "echo-backup") {
			t.Fatalf("request %d: status %d: %s", i, status, body)
		}
		if a := describeAttempts(attemptsOf(t, h, header)); a != "flaky/echo-flaky:503 up/echo-backup:200" {
			t.Fatalf("request %d: attempts %s", i, a)
		}
	}
	if got := breakerState(); got != float64(breakerOpen) {
		t.Fatalf("breaker state %v after 2 failures, want open (2)", got)
	}
	// Open: the flaky upstream is skipped.
	served := f.served.Load()
	_, header, _ := h.chat(msg("guarded", "hi", nil), nil)
	if a := describeAttempts(attemptsOf(t, h, header)); a != "up/echo-backup:200" || f.served.Load() != served {
		t.Fatalf("while open: attempts %s, the flaky upstream saw %d more", a, f.served.Load()-served)
	}
	// After the cool-down one probe goes; it fails, and the breaker opens
	// again.
	time.Sleep(350 * time.Millisecond)
	_, header, _ = h.chat(msg("guarded", "hi", nil), nil)
	if a := describeAttempts(attemptsOf(t, h, header)); a != "flaky/echo-flaky:503 up/echo-backup:200" {
		t.Fatalf("failed probe: attempts %s", a)
	}
	if got := breakerState(); got != float64(breakerOpen) {
		t.Fatalf("breaker state %v after a failed probe, want open (2)", got)
	}
	// The upstream recovers: the next probe closes the breaker.
	f.failing.Store(false)
	time.Sleep(350 * time.Millisecond)
	_, header, body := h.chat(msg("guarded", "hi", nil), nil)
	if a := describeAttempts(attemptsOf(t, h, header)); a != "flaky/echo-flaky:200" || !strings.Contains(string(body), "echo-flaky") {
		t.Fatalf("successful probe: attempts %s: %s", a, body)
	}
	if got := breakerState(); got != float64(breakerClosed) {
		t.Fatalf("breaker state %v after a successful probe, want closed (0)", got)
	}
}

func TestEveryUpstreamCoolingDown(t *testing.T) {
	// One failure per request.
	h, f := newRoutingHarness(t, 2, func(c *Config) { c.Retry.MaxRetries = 0 }, model("lonely", "", on("flaky", "echo-flaky")))
	f.failing.Store(true)
	for range 2 {
		if status, _, _ := h.chat(msg("lonely", "hi", nil), nil); status != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", status)
		}
	}
	served := f.served.Load()
	status, header, body := h.chat(msg("lonely", "hi", nil), nil)
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || f.served.Load() != served ||
		!strings.Contains(string(body), "cooling down") {
		t.Fatalf("status %d, Retry-After %q, upstream tried %d more: %s", status, header.Get("Retry-After"), f.served.Load()-served, body)
	}
}

func TestWeightedBalanceOverTwoUpstreams(t *testing.T) {
	mc := model("spread", "", on("up", "echo-heavy"), on("flaky", "echo-light"))
	mc.Balance = catalog.BalanceWeighted
	mc.Upstreams[0].Weight = 3
	h, _ := newRoutingHarness(t, 2, nil, mc)
	const n = 200
	heavy := 0
	for range n {
		status, _, body := h.chat(msg("spread", "hi", nil), nil)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		if strings.Contains(string(body), "echo-heavy") {
			heavy++
		}
	}
	// 3:1 is a share of 0.75; 5 standard deviations of 200 draws is 0.15.
	if share := float64(heavy) / n; share < 0.60 || share > 0.90 {
		t.Errorf("the weight-3 upstream took %.2f of the requests, want about 0.75", share)
	}
}
