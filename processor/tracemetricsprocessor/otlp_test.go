package tracemetricsprocessor

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// TestOTLPPush runs the push against a local OTLP/HTTP receiver that
// decodes each export as a Collector would, and checks that the pushed
// metrics carry what Prometheus scrapes.
func TestOTLPPush(t *testing.T) {
	var mu sync.Mutex
	var got []pmetric.Metrics
	var headers []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected request "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, req.Metrics())
		headers = append(headers, r.Header.Get("X-Scope-OrgID"))
		mu.Unlock()
		resp, _ := pmetricotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	defer srv.Close()

	cfg := DefaultConfig()
	cfg.OTLPEndpoint = srv.URL // no path: /v1/metrics is added
	cfg.OTLPInterval, cfg.OTLPTimeout = time.Hour, 5*time.Second
	cfg.OTLPHeaders = map[string]string{"X-Scope-OrgID": "tenant-1"}
	p := newTestProcessor(t, cfg, stored, nil)
	boom := "boom"
	consume(t, p,
		complete("e/p", "1", "answer", t0, t0.Add(2*time.Second), `{"usage": {"gpt-4.1": {"prompt_tokens": 100, "completion_tokens": 10}}}`),
		start("e/p", "2", "answer", t0), end("e/p", "2", t0.Add(time.Second), &boom, ""))
	// Shutdown pushes the last values.
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("nothing was pushed")
	}
	if headers[0] != "tenant-1" {
		t.Errorf("header = %q, want the configured one", headers[0])
	}
	md := got[len(got)-1]
	if md.ResourceMetrics().Len() != 1 {
		t.Fatalf("resource metrics = %d", md.ResourceMetrics().Len())
	}
	rm := md.ResourceMetrics().At(0)
	if name, _ := rm.Resource().Attributes().Get("service.name"); name.Str() != "weft" {
		t.Errorf("service.name = %q", name.Str())
	}
	metrics := map[string]pmetric.Metric{}
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			metrics[ms.At(j).Name()] = ms.At(j)
		}
	}
	calls, ok := metrics["weft_app_calls"]
	if !ok || calls.Type() != pmetric.MetricTypeSum || !calls.Sum().IsMonotonic() ||
		calls.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
		t.Fatalf("weft_app_calls missing or not a cumulative monotonic sum: %v", metrics)
	}
	byStatus := map[string]float64{}
	for i := 0; i < calls.Sum().DataPoints().Len(); i++ {
		dp := calls.Sum().DataPoints().At(i)
		project, _ := dp.Attributes().Get("project")
		op, _ := dp.Attributes().Get("op")
		status, _ := dp.Attributes().Get("status")
		if project.Str() != "e/p" || op.Str() != "answer" {
			t.Errorf("data point attributes = %v", dp.Attributes().AsRaw())
		}
		byStatus[status.Str()] += dp.DoubleValue()
	}
	if byStatus["success"] != 1 || byStatus["error"] != 1 {
		t.Errorf("calls by status = %v, want one of each", byStatus)
	}
	dur, ok := metrics["weft_app_call_duration_seconds"]
	if !ok || dur.Type() != pmetric.MetricTypeHistogram || dur.Unit() != "s" {
		t.Fatalf("duration histogram missing: %v", metrics)
	}
	var count uint64
	var sum float64
	for i := 0; i < dur.Histogram().DataPoints().Len(); i++ {
		dp := dur.Histogram().DataPoints().At(i)
		var buckets uint64
		for _, n := range dp.BucketCounts().AsRaw() {
			buckets += n
		}
		if buckets != dp.Count() || dp.BucketCounts().Len() != dp.ExplicitBounds().Len()+1 {
			t.Errorf("histogram buckets %v do not add up to count %d", dp.BucketCounts().AsRaw(), dp.Count())
		}
		count += dp.Count()
		sum += dp.Sum()
	}
	if count != 2 || sum != 3 {
		t.Errorf("duration count %d sum %v, want 2 and 3", count, sum)
	}
	tokens, ok := metrics["weft_app_tokens"]
	if !ok || tokens.Unit() != "{token}" {
		t.Fatalf("weft_app_tokens missing: %v", metrics)
	}
	var input float64
	for i := 0; i < tokens.Sum().DataPoints().Len(); i++ {
		dp := tokens.Sum().DataPoints().At(i)
		if kind, _ := dp.Attributes().Get("kind"); kind.Str() == "input" {
			input += dp.DoubleValue()
		}
	}
	if input != 100 {
		t.Errorf("input tokens = %v, want 100", input)
	}
	if _, ok := metrics["weft_app_cost_usd"]; !ok {
		t.Errorf("weft_app_cost_usd missing: %v", metrics)
	}
}
