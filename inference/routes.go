package inference

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/inference/catalog"
)

// routes is the gateway's live view of its upstreams: requests in flight
// and circuit breakers, one entry per distinct upstream of the catalog
// (catalog.Upstream.Index), with their metrics bound once so the request
// path neither allocates nor looks labels up.
type routes struct {
	retry    RetryConfig
	upstream []upstreamState
}

// upstreamState is one upstream's share of the routes.
type upstreamState struct {
	inFlight atomic.Int64
	breaker  *breaker
	requests prometheus.Counter // attempts sent
	failures prometheus.Counter // attempts that gave no answer to relay
	retries  prometheus.Counter // attempts that repeated an earlier one
	gauge    prometheus.Gauge   // in flight
}

// enter and leave count a request the upstream is answering.
func (s *upstreamState) enter() { s.inFlight.Add(1); s.gauge.Inc() }
func (s *upstreamState) leave() { s.inFlight.Add(-1); s.gauge.Dec() }

// routeMetrics are the per-upstream metric families.
type routeMetrics struct {
	requests, failures, retries *prometheus.CounterVec
	inFlight, breaker           *prometheus.GaugeVec
}

func newRouteMetrics(reg prometheus.Registerer) (*routeMetrics, error) {
	labels := []string{"provider", "upstream_model"}
	m := &routeMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_inference_upstream_requests",
			Help: "Attempts sent to an upstream, retries included."}, labels),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_inference_upstream_attempt_failures",
			Help: "Attempts on an upstream that gave no answer to relay (no answer, timeout, or a status that moves on)."}, labels),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_inference_upstream_retries",
			Help: "Attempts on an upstream that retried a request all its model's upstreams had failed."}, labels),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "weft_inference_upstream_in_flight",
			Help: "Requests an upstream is answering now, streams included."}, labels),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "weft_inference_upstream_breaker_state",
			Help: "An upstream's circuit breaker: 0 closed, 1 half-open (one probe out), 2 open (cooling down)."}, labels),
	}
	for _, c := range []prometheus.Collector{m.requests, m.failures, m.retries, m.inFlight, m.breaker} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("inference routing metrics: %w", err)
		}
	}
	return m, nil
}

func newRoutes(cfg Config, cat *catalog.Catalog, reg prometheus.Registerer) (*routes, error) {
	m, err := newRouteMetrics(reg)
	if err != nil {
		return nil, err
	}
	ups := cat.Upstreams()
	r := &routes{retry: cfg.Retry, upstream: make([]upstreamState, len(ups))}
	for i, u := range ups {
		model := u.Model
		if model == "" {
			model = "(adapters)" // a LoRA server: the adapter varies
		}
		s := &r.upstream[i]
		s.requests = m.requests.WithLabelValues(u.Provider.Name, model)
		s.failures = m.failures.WithLabelValues(u.Provider.Name, model)
		s.retries = m.retries.WithLabelValues(u.Provider.Name, model)
		s.gauge = m.inFlight.WithLabelValues(u.Provider.Name, model)
		s.breaker = newBreaker(cfg.Breaker.Failures, cfg.Breaker.CoolDown, m.breaker.WithLabelValues(u.Provider.Name, model))
		s.breaker.gauge.Set(0)
	}
	return r, nil
}

// state is the shared state of up.
func (r *routes) state(up *catalog.Upstream) *upstreamState { return &r.upstream[up.Index] }

// pick chooses the upstream, by position in m.Upstreams, for the next
// attempt: one not in tried whose breaker lets it through, chosen by the
// model's balance policy. probe is the breaker's (see breaker.allow).
// ok is false when no upstream is left.
func (r *routes) pick(m *catalog.Model, tried uint64, now time.Time) (pos int, probe, ok bool) {
	for {
		pos = r.choose(m, tried, now)
		if pos < 0 {
			return -1, false, false
		}
		if ok, probe = r.state(&m.Upstreams[pos]).breaker.allow(now); ok {
			return pos, probe, true
		}
		tried |= 1 << pos // another request took the probe meanwhile
	}
}

// choose applies the balance policy to the upstreams not tried whose
// breaker is not cooling down; -1 when there is none.
func (r *routes) choose(m *catalog.Model, tried uint64, now time.Time) int {
	ups := m.Upstreams
	switch m.Routing.Balance {
	case catalog.BalanceWeighted:
		total := 0
		for i := range ups {
			if r.candidate(ups, i, tried, now) {
				total += ups[i].Weight
			}
		}
		if total == 0 {
			return -1
		}
		n := rand.N(total)
		for i := range ups {
			if r.candidate(ups, i, tried, now) {
				if n -= ups[i].Weight; n < 0 {
					return i
				}
			}
		}
	case catalog.BalanceLeastBusy:
		best, least := -1, int64(0)
		for i := range ups {
			if r.candidate(ups, i, tried, now) {
				if n := r.state(&ups[i]).inFlight.Load(); best < 0 || n < least {
					best, least = i, n
				}
			}
		}
		return best
	default:
		for i := range ups {
			if r.candidate(ups, i, tried, now) {
				return i
			}
		}
	}
	return -1
}

func (r *routes) candidate(ups []catalog.Upstream, i int, tried uint64, now time.Time) bool {
	return tried&(1<<i) == 0 && r.state(&ups[i]).breaker.available(now)
}

// coolingFor is how long until one of m's upstreams takes requests again,
// when all are cooling down.
func (r *routes) coolingFor(m *catalog.Model, now time.Time) time.Duration {
	wait := time.Duration(-1)
	for i := range m.Upstreams {
		if d := r.state(&m.Upstreams[i]).breaker.retryIn(now); wait < 0 || d < wait {
			wait = d
		}
	}
	return max(wait, time.Second)
}
