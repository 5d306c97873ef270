package inference

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are what the gateway reports beside the trace recorder's.
type metrics struct {
	requests         *prometheus.CounterVec // model, code
	upstreamFailures *prometheus.CounterVec // provider
	inFlight         prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_inference_requests",
			Help: "Gateway requests answered, by catalog model (\"unknown\" for others) and HTTP status."}, []string{"model", "code"}),
		upstreamFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_inference_upstream_failures",
			Help: "Upstream attempts that failed (connection, timeout, or a status that moves to the next upstream), per provider."}, []string{"provider"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_inference_in_flight",
			Help: "Gateway requests being served, streams included."}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.upstreamFailures, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("inference metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) answered(model string, status int) {
	m.requests.WithLabelValues(model, strconv.Itoa(status)).Inc()
}
