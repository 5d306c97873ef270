// Package telemetry holds what every pipeline component reports through:
// its identity, its logger and the process's Prometheus metrics, named as
// the OpenTelemetry Collector names them where a Collector metric exists
// (otelcol_receiver_accepted_spans, otelcol_exporter_queue_size, ...) and
// weft_* otherwise. One Metrics is made per process and passed to every
// component; nothing here is package-level state.
//
// It imports nothing of Weft.
package telemetry

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/collector/component"
)

// Settings is what a component factory hands the component it creates.
type Settings struct {
	ID      component.ID
	Logger  *slog.Logger
	Metrics *Metrics
}

// Metrics is the process's metric registry and every metric family the
// pipeline reports. Components take labelled children of these.
type Metrics struct {
	Registry *prometheus.Registry

	ReceiverAcceptedSpans *prometheus.CounterVec // receiver, transport
	ReceiverRefusedSpans  *prometheus.CounterVec // receiver, transport
	ReceiverAcceptedCalls *prometheus.CounterVec // receiver, transport
	ReceiverRefusedCalls  *prometheus.CounterVec // receiver, transport

	ProcessorQueueSize     *prometheus.GaugeVec     // processor
	ProcessorQueueCapacity *prometheus.GaugeVec     // processor
	ProcessorQueueBytes    *prometheus.GaugeVec     // processor
	ProcessorRefusedCalls  *prometheus.CounterVec   // processor
	BatchSendSize          *prometheus.HistogramVec // processor

	ExporterQueueSize          *prometheus.GaugeVec     // exporter
	ExporterQueueCapacity      *prometheus.GaugeVec     // exporter
	ExporterQueueBytes         *prometheus.GaugeVec     // exporter
	ExporterQueueCapacityBytes *prometheus.GaugeVec     // exporter
	ExporterSentCalls          *prometheus.CounterVec   // exporter
	ExporterSendFailedCalls    *prometheus.CounterVec   // exporter
	ExporterSendLatency        *prometheus.HistogramVec // exporter

	StorageWriteLatency *prometheus.HistogramVec // backend
	// StorageCheckpointLatency times the checkpoints that make stored
	// calls durable, for stores that need them.
	StorageCheckpointLatency *prometheus.HistogramVec // backend
	// StorageCheckpointsDeferred counts checkpoints put off because a
	// long read of calls was running.
	StorageCheckpointsDeferred *prometheus.CounterVec // backend
	StorageWrittenCalls        *prometheus.CounterVec // backend
	StorageRejectedOps         *prometheus.CounterVec // backend

	KafkaConsumerLag  *prometheus.GaugeVec   // topic
	KafkaDeadLettered *prometheus.CounterVec // topic

	// HTTPAbortedResponses counts answers broken off after their status
	// was sent (a stream whose read failed part way).
	HTTPAbortedResponses *prometheus.CounterVec // route
}

// latencyBuckets span a fast fsync to a stalled store.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New registers every family on a fresh registry, with the Go runtime and
// process collectors (RSS, open files) beside them.
func New() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := factory{r}
	return &Metrics{
		Registry:              r,
		ReceiverAcceptedSpans: f.counter("otelcol_receiver_accepted_spans", "Spans accepted and made durable, per receiver.", "receiver", "transport"),
		ReceiverRefusedSpans:  f.counter("otelcol_receiver_refused_spans", "Spans refused (invalid, overload, shutdown), per receiver.", "receiver", "transport"),
		ReceiverAcceptedCalls: f.counter("weft_receiver_accepted_calls", "Call records (parts, updates, deletes) accepted and made durable, per receiver.", "receiver", "transport"),
		ReceiverRefusedCalls:  f.counter("weft_receiver_refused_calls", "Call records refused, per receiver.", "receiver", "transport"),

		ProcessorQueueSize:     f.gauge("weft_processor_queue_size", "Call records admitted and waiting for their batch to be exported.", "processor"),
		ProcessorQueueCapacity: f.gauge("weft_processor_queue_capacity", "Most call records the processor admits at once.", "processor"),
		ProcessorQueueBytes:    f.gauge("weft_processor_queue_bytes", "Approximate payload bytes admitted and waiting.", "processor"),
		ProcessorRefusedCalls:  f.counter("otelcol_processor_refused_calls", "Call records the processor refused because its queue was full or it was stopping.", "processor"),
		BatchSendSize: f.histogram("otelcol_processor_batch_batch_send_size", "Call records in each batch sent to the exporter.", "processor",
			[]float64{1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000, 50000}),

		ExporterQueueSize:          f.gauge("otelcol_exporter_queue_size", "Call records acknowledged but not yet in the store (the write-ahead log's backlog).", "exporter"),
		ExporterQueueCapacity:      f.gauge("otelcol_exporter_queue_capacity", "Most call records the exporter's queue holds.", "exporter"),
		ExporterQueueBytes:         f.gauge("weft_exporter_queue_bytes", "Payload bytes acknowledged but not yet in the store.", "exporter"),
		ExporterQueueCapacityBytes: f.gauge("weft_exporter_queue_capacity_bytes", "Most payload bytes the exporter's queue holds.", "exporter"),
		ExporterSentCalls:          f.counter("otelcol_exporter_sent_calls", "Call records the exporter made durable.", "exporter"),
		ExporterSendFailedCalls:    f.counter("otelcol_exporter_send_failed_calls", "Call records the exporter failed to make durable.", "exporter"),
		ExporterSendLatency:        f.histogram("weft_exporter_send_duration_seconds", "Time for one batch to become durable in the exporter.", "exporter", latencyBuckets),

		StorageWriteLatency: f.histogram("weft_storage_write_duration_seconds", "Time of one call write transaction in the store.", "backend", latencyBuckets),
		StorageCheckpointLatency: f.histogram("weft_storage_checkpoint_duration_seconds",
			"Time of one checkpoint making stored calls durable (embedded store with the write-ahead log).", "backend", latencyBuckets),
		StorageCheckpointsDeferred: f.counter("weft_storage_checkpoints_deferred",
			"Checkpoints put off because a long read of calls was running (for at most 256 MiB stored or 2 minutes).", "backend"),
		StorageWrittenCalls: f.counter("weft_storage_written_calls", "Call records written to the store.", "backend"),
		StorageRejectedOps:  f.counter("weft_storage_rejected_calls", "Acknowledged call records the store refused even alone; logged and set aside.", "backend"),

		KafkaConsumerLag:  f.gauge("weft_kafka_consumer_lag", "Records between the consumer's position and the partition end.", "topic"),
		KafkaDeadLettered: f.counter("weft_kafka_dead_lettered_records", "Records sent to the dead-letter topic.", "topic"),

		HTTPAbortedResponses: f.counter("weft_http_aborted_responses",
			"Answers broken off after their 200 was sent, because the read behind them failed part way; the client sees a broken connection or stream.", "route"),
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

type factory struct{ r *prometheus.Registry }

func (f factory) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.r.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.r.MustRegister(g)
	return g
}

func (f factory) histogram(name, help, label string, buckets []float64) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{label})
	f.r.MustRegister(h)
	return h
}

// NopSettings is a component's settings for tests: a discarding logger and
// a private registry.
func NopSettings(typ string) Settings {
	return Settings{
		ID:      component.NewID(component.MustNewType(typ)),
		Logger:  slog.New(slog.DiscardHandler),
		Metrics: New(),
	}
}
