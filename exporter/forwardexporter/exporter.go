package forwardexporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

const typeStr = "forward"

// Exporter is the agent's store-and-forward exporter. See the package doc.
type Exporter struct {
	cfg    Config
	sink   Sink
	logger *slog.Logger
	m      exporterMetrics

	mu      sync.Mutex
	buf     *buffer
	stop    context.CancelFunc
	exited  chan struct{}
	stopped bool
}

type exporterMetrics struct {
	queueSize         prometheus.Gauge
	sent, failed      prometheus.Counter
	rejected          prometheus.Counter
	sendLatency       prometheus.Observer
	bufferBytes, capB prometheus.Gauge
}

func (m *exporterMetrics) setBacklog(b *buffer) {
	m.queueSize.Set(float64(b.backlog()))
	m.bufferBytes.Set(float64(b.log.Bytes()))
}

// New builds an exporter delivering through sink. It opens the buffer on
// Start.
func New(set telemetry.Settings, cfg Config, sink Sink) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sink == nil {
		return nil, errors.New("forward exporter: no sink")
	}
	id, mt := set.ID.String(), set.Metrics
	e := &Exporter{cfg: cfg, sink: sink, logger: set.Logger, exited: make(chan struct{}),
		m: exporterMetrics{
			queueSize: mt.ExporterQueueSize.WithLabelValues(id),
			sent:      mt.ExporterSentCalls.WithLabelValues(id), failed: mt.ExporterSendFailedCalls.WithLabelValues(id),
			rejected:    mt.StorageRejectedOps.WithLabelValues("upstream"),
			sendLatency: mt.ExporterSendLatency.WithLabelValues(id),
			bufferBytes: mt.ExporterQueueBytes.WithLabelValues(id), capB: mt.ExporterQueueCapacityBytes.WithLabelValues(id),
		}}
	e.m.capB.Set(float64(cfg.MaxBufferBytes))
	return e, nil
}

// Type names the exporter in metrics.
func Type() component.Type { return component.MustNewType(typeStr) }

// Start implements component.Component: it opens the buffer and starts
// forwarding whatever an earlier run left in it.
func (e *Exporter) Start(context.Context, component.Host) error {
	buf, err := openBuffer(e.cfg.BufferDir, e.cfg.MaxBufferBytes, e.cfg.segmentBytes())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &forwarder{cfg: e.cfg, buf: buf, sink: e.sink, logger: e.logger, m: &e.m,
		reader: buf.log.NewReader(buf.forwarded), readSeq: buf.forwarded}
	e.mu.Lock()
	e.buf, e.stop = buf, cancel
	e.mu.Unlock()
	e.m.setBacklog(buf)
	if n := buf.backlog(); n > 0 {
		e.logger.Info("agent: forwarding the buffer's backlog", "records", n)
	}
	go func() {
		defer close(e.exited)
		f.run(ctx)
	}()
	return nil
}

// ConsumeCalls implements consumer.Calls: it buffers ops under the API key
// that CredentialsFrom(ctx) holds and returns once they are fsynced. A
// delete answers the number of distinct ids it names: the calls it really
// removes are only known upstream, later.
func (e *Exporter) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	key := KeyFrom(ctx)
	if key == "" {
		return nil, fmt.Errorf("%w: no API key to forward the records under", storage.ErrInvalidArgument)
	}
	if err := storageexporter.ValidateOps(ops); err != nil {
		e.m.failed.Add(float64(len(ops)))
		return nil, err
	}
	if err := e.append(ctx, encodeRecord(key, ops), len(ops)); err != nil {
		return nil, err
	}
	return deleteResults(ops), nil
}

// ConsumeTraces implements consumer.Traces: it buffers td as one OTLP
// request, to be forwarded to the center's OTLP endpoint under the API key
// of ctx and the project_id header project.
func (e *Exporter) ConsumeTraces(ctx context.Context, project string, td ptrace.Traces) error {
	key := KeyFrom(ctx)
	if key == "" {
		return fmt.Errorf("%w: no API key to forward the spans under", storage.ErrInvalidArgument)
	}
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return fmt.Errorf("%w: %w", storage.ErrInvalidArgument, err)
	}
	return e.append(ctx, encodeOTLPRecord(key, project, td.SpanCount(), body), td.SpanCount())
}

// append buffers one record of n calls or spans.
func (e *Exporter) append(ctx context.Context, rec []byte, n int) error {
	buf := e.running()
	if buf == nil {
		return consumer.ErrStopped
	}
	if err := buf.append(ctx, rec); err != nil {
		e.m.failed.Add(float64(n))
		return err
	}
	e.m.setBacklog(buf)
	return nil
}

func (e *Exporter) running() *buffer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	return e.buf
}

func deleteResults(ops []storage.CallOp) []storage.CallOpResult {
	res := make([]storage.CallOpResult, len(ops))
	for i, op := range ops {
		if op.Delete == nil {
			continue
		}
		seen := map[string]bool{}
		for _, id := range op.Delete.IDs {
			seen[id] = true
		}
		res[i].NumDeleted = len(seen)
	}
	return res
}

// Saturated reports a buffer nine tenths full, so receivers turn requests
// away before reading them.
func (e *Exporter) Saturated() bool {
	buf := e.running()
	return buf != nil && buf.saturated()
}

// Backlog is the number of buffered records not yet accepted upstream.
func (e *Exporter) Backlog() uint64 {
	buf := e.running()
	if buf == nil {
		return 0
	}
	return buf.backlog()
}

// Shutdown implements component.Component: it refuses new records, stops
// forwarding after the attempt in hand, and closes the buffer. What is
// still buffered is forwarded after the next start.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	buf, stop, already := e.buf, e.stop, e.stopped
	e.stopped = true
	e.mu.Unlock()
	if buf == nil || already {
		return nil
	}
	stop()
	select {
	case <-e.exited:
	case <-ctx.Done():
		return fmt.Errorf("agent: forwarder did not stop: %w", ctx.Err())
	}
	if n := buf.backlog(); n > 0 {
		e.logger.Info("agent: stopping with records buffered; they are forwarded after the next start", "records", n)
	}
	return errors.Join(buf.close(), e.sink.Close(ctx))
}
