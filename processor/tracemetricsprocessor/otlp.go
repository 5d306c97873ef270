package tracemetricsprocessor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// scopeName is the instrumentation scope of pushed trace metrics.
const scopeName = "github.com/weftdev/weft/processor/tracemetricsprocessor"

// pusher pushes the trace metrics as OTLP/HTTP metrics on an interval,
// with the SDK's periodic reader over the same values Prometheus scrapes
// (so both agree), and once more on shutdown.
type pusher struct {
	cfg      Config
	gatherer prometheus.Gatherer
	logger   *slog.Logger
	provider *sdkmetric.MeterProvider
}

func newPusher(cfg Config, g prometheus.Gatherer, logger *slog.Logger) *pusher {
	return &pusher{cfg: cfg, gatherer: g, logger: logger}
}

func (p *pusher) start(ctx context.Context) error {
	endpoint, err := p.cfg.endpointURL()
	if err != nil {
		return err
	}
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(endpoint),
		otlpmetrichttp.WithHeaders(p.cfg.OTLPHeaders), otlpmetrichttp.WithTimeout(p.cfg.OTLPTimeout))
	if err != nil {
		return fmt.Errorf("trace_metrics.otlp_endpoint: %w", err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(p.cfg.OTLPInterval),
		sdkmetric.WithTimeout(p.cfg.OTLPTimeout),
		sdkmetric.WithProducer(&bridge{gatherer: p.gatherer, start: time.Now()}))
	res := resource.NewSchemaless(attribute.String("service.name", "weft"))
	p.provider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	return nil
}

// shutdown pushes the last values and stops.
func (p *pusher) shutdown(ctx context.Context) error {
	if p.provider == nil {
		return nil
	}
	if err := p.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("trace metrics: final OTLP push: %w", err)
	}
	return nil
}

// bridge turns the gathered Prometheus families into OTLP metrics: a
// counter into a cumulative monotonic sum named without its _total
// suffix, a histogram into a cumulative explicit-bucket histogram. A
// Prometheus exporter behind a Collector adds the suffixes back, so a
// dashboard's queries work on either path.
type bridge struct {
	gatherer prometheus.Gatherer
	start    time.Time
}

// Produce implements sdkmetric.Producer.
func (b *bridge) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	families, err := b.gatherer.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather trace metrics: %w", err)
	}
	now := time.Now()
	sm := metricdata.ScopeMetrics{Scope: instrumentation.Scope{Name: scopeName}}
	for _, f := range families {
		if m, ok := b.metric(f, now); ok {
			sm.Metrics = append(sm.Metrics, m)
		}
	}
	return []metricdata.ScopeMetrics{sm}, nil
}

func (b *bridge) metric(f *dto.MetricFamily, now time.Time) (metricdata.Metrics, bool) {
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		sum := metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
		for _, m := range f.GetMetric() {
			sum.DataPoints = append(sum.DataPoints, metricdata.DataPoint[float64]{
				Attributes: attrs(m), StartTime: b.start, Time: now, Value: m.GetCounter().GetValue()})
		}
		name := strings.TrimSuffix(f.GetName(), "_total")
		return metricdata.Metrics{Name: name, Description: f.GetHelp(), Unit: unitOf(name), Data: sum}, true
	case dto.MetricType_HISTOGRAM:
		h := metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}
		for _, m := range f.GetMetric() {
			ph := m.GetHistogram()
			dp := metricdata.HistogramDataPoint[float64]{Attributes: attrs(m), StartTime: b.start, Time: now,
				Count: ph.GetSampleCount(), Sum: ph.GetSampleSum()}
			var below uint64 // Prometheus buckets are cumulative, OTLP's are not
			for _, bk := range ph.GetBucket() {
				dp.Bounds = append(dp.Bounds, bk.GetUpperBound())
				dp.BucketCounts = append(dp.BucketCounts, bk.GetCumulativeCount()-below)
				below = bk.GetCumulativeCount()
			}
			dp.BucketCounts = append(dp.BucketCounts, ph.GetSampleCount()-below) // +Inf
			h.DataPoints = append(h.DataPoints, dp)
		}
		return metricdata.Metrics{Name: f.GetName(), Description: f.GetHelp(), Unit: "s", Data: h}, true
	}
	return metricdata.Metrics{}, false
}

// unitOf is a counter's unit, in braces where it is a count of things so
// a Prometheus exporter adds nothing to the name for it.
func unitOf(name string) string {
	switch {
	case strings.HasSuffix(name, "_tokens"):
		return "{token}"
	case strings.HasSuffix(name, "_usd"):
		return "{USD}"
	}
	return "{call}"
}

func attrs(m *dto.Metric) attribute.Set {
	kvs := make([]attribute.KeyValue, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		kvs = append(kvs, attribute.String(l.GetName(), l.GetValue()))
	}
	return attribute.NewSet(kvs...)
}
