package config

import (
	"strings"
	"testing"
	"time"
)

func TestTraceMetricsSettings(t *testing.T) {
	file := writeFile(t, "data_dir: /d\ntrace_metrics:\n  enabled: true\n  max_ops_per_project: 7\n"+
		"  otlp_endpoint: http://collector:4318/v1/metrics\n  otlp_interval: 15s\n  otlp_headers: {authorization: Bearer x}\n")
	cfg, err := Load([]string{"--config", file}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	tm := cfg.TraceMetrics
	if !tm.Enabled || tm.MaxOpsPerProject != 7 || tm.MaxProjects != 100 || tm.OTLPInterval != 15*time.Second ||
		tm.OTLPTimeout != 10*time.Second || tm.OTLPHeaders["authorization"] != "Bearer x" {
		t.Fatalf("trace_metrics = %+v", tm)
	}
	if Default().TraceMetrics.Enabled {
		t.Fatal("trace metrics are on by default")
	}
	for body, key := range map[string]string{
		"trace_metrics: {max_ops_per_project: 0}":     "trace_metrics.max_ops_per_project",
		"trace_metrics: {otlp_endpoint: 'host:4318'}": "trace_metrics.otlp_endpoint",
	} {
		_, err := Load([]string{"--config", writeFile(t, "data_dir: /d\n"+body+"\n")}, env(nil))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want one naming %s", body, err, key)
		}
	}
}
