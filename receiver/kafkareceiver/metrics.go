package kafkareceiver

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/telemetry"
)

// receiverMetrics reports the consumer's lag and dead letters. The zero
// value reports nothing.
type receiverMetrics struct {
	lag  prometheus.Gauge
	dead prometheus.Counter

	mu           sync.Mutex
	partitionLag map[int]int64
}

// instrument reports the processor's lag (weft_kafka_consumer_lag) and
// dead letters to m. Call it before Run.
func (p *Receiver) instrument(m *telemetry.Metrics) {
	p.metrics.lag = m.KafkaConsumerLag.WithLabelValues(p.cfg.Topic)
	p.metrics.dead = m.KafkaDeadLettered.WithLabelValues(p.cfg.DeadLetterTopic)
}

// observe records, from a handled batch, how far each of its partitions
// is behind the partition's end.
func (m *receiverMetrics) observe(batch []kafka.Message) {
	if m.lag == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.partitionLag == nil {
		m.partitionLag = map[int]int64{}
	}
	for _, msg := range batch {
		m.partitionLag[msg.Partition] = max(msg.HighWaterMark-msg.Offset-1, 0)
	}
	var total int64
	for _, l := range m.partitionLag {
		total += l
	}
	m.lag.Set(float64(total))
}

func (m *receiverMetrics) deadLettered(n int) {
	if m.dead != nil {
		m.dead.Add(float64(n))
	}
}
