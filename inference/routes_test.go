package inference

import (
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weftdev/weft/inference/catalog"
)

func TestBreakerStates(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	type step struct {
		op        string // allow, ok, fail, abandon
		at        time.Duration
		probe     bool
		wantOK    bool  // allow's answer
		wantProbe bool  // allow's answer
		wantState int32 // after the step
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"opens after the threshold of consecutive failures", []step{
			{op: "fail", wantState: breakerClosed},
			{op: "fail", wantState: breakerClosed},
			{op: "fail", wantState: breakerOpen},
			{op: "allow", at: time.Second, wantOK: false, wantState: breakerOpen},
		}},
		{"a success resets the count", []step{
			{op: "fail"}, {op: "fail"}, {op: "ok"}, {op: "fail"}, {op: "fail", wantState: breakerClosed},
		}},
		{"one probe after the cool-down, and its success closes", []step{
			{op: "fail"}, {op: "fail"}, {op: "fail", wantState: breakerOpen},
			{op: "allow", at: 10 * time.Second, wantOK: true, wantProbe: true, wantState: breakerHalfOpen},
			{op: "allow", at: 10 * time.Second, wantOK: false, wantState: breakerHalfOpen},
			{op: "ok", probe: true, wantState: breakerClosed},
			{op: "allow", at: 10 * time.Second, wantOK: true, wantState: breakerClosed},
		}},
		{"a failed probe opens for another cool-down", []step{
			{op: "fail"}, {op: "fail"}, {op: "fail", wantState: breakerOpen},
			{op: "allow", at: 10 * time.Second, wantOK: true, wantProbe: true, wantState: breakerHalfOpen},
			{op: "fail", at: 10 * time.Second, probe: true, wantState: breakerOpen},
			{op: "allow", at: 15 * time.Second, wantOK: false, wantState: breakerOpen},
			{op: "allow", at: 20 * time.Second, wantOK: true, wantProbe: true, wantState: breakerHalfOpen},
		}},
		{"an abandoned probe lets the next request probe", []step{
			{op: "fail"}, {op: "fail"}, {op: "fail", wantState: breakerOpen},
			{op: "allow", at: 10 * time.Second, wantOK: true, wantProbe: true, wantState: breakerHalfOpen},
			{op: "abandon", at: 10 * time.Second, probe: true, wantState: breakerOpen},
			{op: "allow", at: 10 * time.Second, wantOK: true, wantProbe: true, wantState: breakerHalfOpen},
		}},
		{"late answers of requests let through before it opened change nothing", []step{
			{op: "fail"}, {op: "fail"}, {op: "fail", wantState: breakerOpen},
			{op: "ok", wantState: breakerOpen}, {op: "fail", wantState: breakerOpen},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"})
			b := newBreaker(3, 10*time.Second, gauge)
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				switch s.op {
				case "allow":
					ok, probe := b.allow(now)
					if ok != s.wantOK || probe != s.wantProbe {
						t.Fatalf("step %d: allow = %v, probe %v; want %v, %v", i, ok, probe, s.wantOK, s.wantProbe)
					}
				case "ok":
					b.success(s.probe)
				case "fail":
					b.failure(now, s.probe)
				case "abandon":
					b.abandon(now, s.probe)
				}
				if got := b.state.Load(); got != s.wantState {
					t.Fatalf("step %d (%s): state %d, want %d", i, s.op, got, s.wantState)
				}
				if got := testutil.ToFloat64(gauge); s.wantState != breakerClosed && got != float64(s.wantState) {
					t.Fatalf("step %d: gauge %v, want %d", i, got, s.wantState)
				}
			}
		})
	}
}

func TestNextAttempt(t *testing.T) {
	cfg := RetryConfig{MaxRetries: 2, Backoff: 100 * time.Millisecond, MaxBackoff: time.Second, MaxRetryAfter: 5 * time.Second, MaxElapsed: 10 * time.Second}
	cases := []struct {
		name           string
		f              failure
		untried        bool
		retries        int
		elapsed        time.Duration
		again          bool
		minPause, maxP time.Duration
	}{
		{"fails over to an untried upstream at once, whatever the failure", failure{status: 401}, true, 0, 0, true, 0, 0},
		{"retries a 503 after a backoff", failure{status: 503}, false, 0, 0, true, 50 * time.Millisecond, 100 * time.Millisecond},
		{"backs off longer on the second retry", failure{status: 500}, false, 1, 0, true, 100 * time.Millisecond, 200 * time.Millisecond},
		{"retries a connection failure", failure{}, false, 0, 0, true, 50 * time.Millisecond, 100 * time.Millisecond},
		{"honours a short Retry-After", failure{status: 429, retryAfter: 1500 * time.Millisecond}, false, 0, 0, true, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"gives up on a long Retry-After", failure{status: 429, retryAfter: time.Minute}, false, 0, 0, false, 0, 0},
		{"stops after max_retries", failure{status: 503}, false, 2, 0, false, 0, 0},
		{"stops when the pause would pass max_elapsed", failure{status: 503, retryAfter: 2 * time.Second}, false, 0, 9 * time.Second, false, 0, 0},
		{"does not retry a refusal of the request", failure{status: 401}, false, 0, 0, false, 0, 0},
		{"does not retry a 501", failure{status: 501}, false, 0, 0, false, 0, 0},
		{"retries a 408 and a 504", failure{status: http.StatusGatewayTimeout}, false, 0, 0, true, 50 * time.Millisecond, 100 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			again, pause := cfg.nextAttempt(&tc.f, tc.untried, tc.retries, tc.elapsed)
			if again != tc.again || pause < tc.minPause || pause > tc.maxP {
				t.Fatalf("nextAttempt = %v, %v; want %v with a pause in [%v, %v]", again, pause, tc.again, tc.minPause, tc.maxP)
			}
		})
	}
}

func TestUpstreamRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "2"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-4"}, 0},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := upstreamRetryAfter(h, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.header, got, tc.want)
		}
	}
}

// testRoutes builds routes over one model with the given upstream
// weights and balance policy.
func testRoutes(t *testing.T, balance string, weights ...int) (*routes, *catalog.Model) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Providers = []catalog.ProviderConfig{{Name: "p", BaseURL: "http://127.0.0.1:1/v1"}}
	mc := catalog.ModelConfig{ID: "m", Routing: catalog.Routing{Balance: balance}}
	for i, w := range weights {
		mc.Upstreams = append(mc.Upstreams, catalog.UpstreamConfig{Provider: "p", Model: string(rune('a' + i)), Weight: w})
	}
	cfg.Models = []catalog.ModelConfig{mc}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(cfg.Providers, cfg.Models, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRoutes(cfg, cat, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cat.Lookup("m")
	return r, m
}

func TestBalancePicks(t *testing.T) {
	now := time.Now()
	const draws = 20000
	cases := []struct {
		name     string
		balance  string
		weights  []int
		tried    uint64
		inFlight []int64
		open     []bool
		want     []float64 // share of first picks per upstream
	}{
		{"failover takes the first", "", []int{1, 1, 1}, 0, nil, nil, []float64{1, 0, 0}},
		{"failover skips the tried", catalog.BalanceFailover, []int{1, 1, 1}, 1, nil, nil, []float64{0, 1, 0}},
		{"failover skips an open breaker", "", []int{1, 1, 1}, 0, nil, []bool{true, false, false}, []float64{0, 1, 0}},
		{"weighted follows the weights", catalog.BalanceWeighted, []int{3, 1}, 0, nil, nil, []float64{0.75, 0.25}},
		{"weighted counts 0 as 1", catalog.BalanceWeighted, []int{0, 1}, 0, nil, nil, []float64{0.5, 0.5}},
		{"weighted spreads over the untried", catalog.BalanceWeighted, []int{1, 2, 2}, 1, nil, nil, []float64{0, 0.5, 0.5}},
		{"least busy takes the idlest", catalog.BalanceLeastBusy, []int{1, 1, 1}, 0, []int64{4, 1, 2}, nil, []float64{0, 1, 0}},
		{"least busy breaks ties in order", catalog.BalanceLeastBusy, []int{1, 1, 1}, 0, []int64{3, 1, 1}, nil, []float64{0, 1, 0}},
		{"least busy skips an open breaker", catalog.BalanceLeastBusy, []int{1, 1}, 0, []int64{0, 5}, []bool{true, false}, []float64{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, m := testRoutes(t, tc.balance, tc.weights...)
			for i, n := range tc.inFlight {
				r.state(&m.Upstreams[i]).inFlight.Store(n)
			}
			for i, open := range tc.open {
				if open {
					b := r.state(&m.Upstreams[i]).breaker
					for range 5 {
						b.failure(now, false)
					}
				}
			}
			counts := make([]int, len(tc.weights))
			for range draws {
				pos, probe, ok := r.pick(m, tc.tried, now)
				if !ok || probe {
					t.Fatalf("pick = %d, probe %v, ok %v", pos, probe, ok)
				}
				counts[pos]++
			}
			for i, want := range tc.want {
				// 5 standard deviations of a binomial share: fails by chance
				// about once in 3.5 million runs.
				tol := 5 * math.Sqrt(want*(1-want)/draws)
				if got := float64(counts[i]) / draws; math.Abs(got-want) > tol+1e-9 {
					t.Errorf("upstream %d: share %.3f, want %.3f ± %.3f", i, got, want, tol)
				}
			}
		})
	}
}

func TestPickNoneLeft(t *testing.T) {
	r, m := testRoutes(t, catalog.BalanceWeighted, 1, 1)
	now := time.Now()
	if _, _, ok := r.pick(m, 0b11, now); ok {
		t.Fatal("picked an upstream when every one was tried")
	}
	for i := range m.Upstreams {
		for range 5 {
			r.state(&m.Upstreams[i]).breaker.failure(now, false)
		}
	}
	if _, _, ok := r.pick(m, 0, now); ok {
		t.Fatal("picked an upstream whose breaker is open")
	}
	if d := r.coolingFor(m, now); d != 30*time.Second {
		t.Fatalf("coolingFor = %v, want the cool-down", d)
	}
	pos, probe, ok := r.pick(m, 0, now.Add(31*time.Second))
	if !ok || !probe {
		t.Fatalf("after the cool-down: pick = %d, probe %v, ok %v; want a probe", pos, probe, ok)
	}
}

func TestBreakerLetsOneProbeThrough(t *testing.T) {
	b := newBreaker(1, time.Second, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))
	now := time.Now()
	b.failure(now, false)
	later := now.Add(2 * time.Second)
	var wg sync.WaitGroup
	var allowed, probes atomic.Int64
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, probe := b.allow(later); ok {
				allowed.Add(1)
				if probe {
					probes.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 1 || probes.Load() != 1 {
		t.Fatalf("%d requests let through (%d probes) after the cool-down, want one probe", allowed.Load(), probes.Load())
	}
}
