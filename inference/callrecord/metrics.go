package callrecord

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are what the recorder reports.
type Metrics struct {
	Recorded prometheus.Counter
	Lost     *prometheus.CounterVec // reason
	Queued   prometheus.Gauge
}

// NewMetrics registers the recorder's metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Recorded: prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_inference_traced_calls",
			Help: "Gateway calls handed to the ingest pipeline and made durable."}),
		Lost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_inference_lost_calls",
			Help: "Gateway calls not traced: trace queue full, pipeline refused, invalid, or shutdown."}, []string{"reason"}),
		Queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_inference_trace_queue_size",
			Help: "Gateway calls waiting for the ingest pipeline."}),
	}
	for _, c := range []prometheus.Collector{m.Recorded, m.Lost, m.Queued} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("inference trace metrics: %w", err)
		}
	}
	for _, reason := range []string{LostQueueFull, LostRefused, LostInvalid, LostShutdown} {
		m.Lost.WithLabelValues(reason)
	}
	return m, nil
}

// lossLogEvery spaces the warnings about lost calls: under a sustained
// overload one line per interval says how many were lost, not one per call.
const lossLogEvery = 10 * time.Second

// lossLog counts lost calls and logs them in intervals.
type lossLog struct {
	logger  *slog.Logger
	metrics *Metrics

	mu      sync.Mutex
	pending map[string]int
	lastErr error
	last    time.Time
}

func newLossLog(logger *slog.Logger, m *Metrics) *lossLog {
	return &lossLog{logger: logger, metrics: m, pending: map[string]int{}}
}

func (l *lossLog) add(reason string, n int) {
	l.metrics.Lost.WithLabelValues(reason).Add(float64(n))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[reason] += n
	if time.Since(l.last) >= lossLogEvery {
		l.logLocked()
	}
}

// note keeps the pipeline's last refusal for the next log line.
func (l *lossLog) note(err error) {
	l.mu.Lock()
	l.lastErr = err
	l.mu.Unlock()
}

func (l *lossLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		l.logLocked()
	}
}

func (l *lossLog) logLocked() {
	args := []any{"window", lossLogEvery.String()}
	for reason, n := range l.pending {
		args = append(args, reason, n)
	}
	if l.lastErr != nil {
		args = append(args, "last_err", l.lastErr)
	}
	l.logger.Warn("gateway calls were not traced (see weft_inference_lost_calls); raise inference.trace_queue_* or relieve the ingest pipeline", args...)
	l.pending, l.lastErr, l.last = map[string]int{}, nil, time.Now()
}
