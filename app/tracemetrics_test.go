package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
)

func withTraceMetrics(c *config.Config) { c.TraceMetrics.Enabled = true }

// writeTraceMetricsCalls writes the chart calls (start and end in one
// request) and a call whose start and end come in separate requests.
func writeTraceMetricsCalls(e *env) {
	writeChartCalls(e)
	e.ok("/call/start", map[string]any{"start": startBody("s1", "", "weave:///acme/app/op/retrieve:v1", "2025-01-01T00:00:00Z")}, nil)
	e.ok("/call/end", map[string]any{"end": map[string]any{"project_id": "acme/app", "id": "s1", "ended_at": "2025-01-01T00:00:00.250Z",
		"summary": map[string]any{}}}, nil)
}

func TestTraceMetricsScrapeNeedsAnInstanceAdminKey(t *testing.T) {
	e := newEnv(t, withTraceMetrics)
	writeTraceMetricsCalls(e)

	status, _, anon := e.do(http.MethodGet, "/metrics", "", nil)
	if status != http.StatusOK || !strings.Contains(string(anon), "otelcol_exporter_sent_calls") {
		t.Fatalf("anonymous /metrics = %d without weft's own metrics:\n%.300s", status, anon)
	}
	if strings.Contains(string(anon), "weft_app_") || strings.Contains(string(anon), "acme/app") {
		t.Fatalf("an anonymous scrape shows trace metrics:\n%s", grepLines(anon, "weft_app_"))
	}

	status, _, admin := e.do(http.MethodGet, "/metrics", e.admin, nil)
	if status != http.StatusOK {
		t.Fatalf("admin /metrics = %d: %s", status, admin)
	}
	for _, want := range []string{
		"otelcol_exporter_sent_calls",
		`weft_app_calls_total{op="chat",project="acme/app",status="success"} 2`,
		`weft_app_calls_total{op="chat",project="acme/app",status="error"} 1`,
		`weft_app_calls_total{op="retrieve",project="acme/app",status="success"} 1`,
		`weft_app_call_duration_seconds_sum{op="retrieve",project="acme/app",status="success"} 0.25`,
		`weft_app_tokens_total{kind="input",model="gpt-4o",project="acme/app"} 3000`,
		`weft_app_tokens_total{kind="output",model="gpt-4o",project="acme/app"} 1500`,
		`weft_app_cost_usd_total{model="gpt-4o",project="acme/app"}`,
		`weft_app_series_overflow_total{bound="max_ops_per_project"} 0`,
	} {
		if !strings.Contains(string(admin), want) {
			t.Errorf("admin scrape lacks %s:\n%s", want, grepLines(admin, "weft_app_"))
		}
	}

	for _, tc := range []struct {
		name, key string
		want      int
	}{
		{"member of the entity", e.member, http.StatusForbidden},
		{"admin of one entity", e.evil, http.StatusForbidden},
		{"not a key", "weft_not-a-key", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.do(http.MethodGet, "/metrics", tc.key, nil)
			if status != tc.want || strings.Contains(string(body), "weft_app_") {
				t.Fatalf("/metrics = %d, want %d without trace metrics: %.300s", status, tc.want, body)
			}
		})
	}
}

func TestTraceMetricsOffByDefault(t *testing.T) {
	e := newEnv(t)
	writeTraceMetricsCalls(e)
	status, _, body := e.do(http.MethodGet, "/metrics", e.admin, nil)
	if status != http.StatusOK || strings.Contains(string(body), "weft_app_") {
		t.Fatalf("admin /metrics with trace metrics off = %d:\n%s", status, grepLines(body, "weft_app_"))
	}
}

// TestTraceMetricsOnMetricsListen runs a whole server with /metrics on a
// listener of its own: there the trace metrics are served without a key,
// and the API listener serves no /metrics at all.
func TestTraceMetricsOnMetricsListen(t *testing.T) {
	metricsAddr := freeAddr(t)
	cfg := config.Default()
	cfg.DataDir, cfg.Listen, cfg.OTLPGRPCListen, cfg.MetricsListen = t.TempDir(), "127.0.0.1:0", "", metricsAddr
	withTraceMetrics(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	e := &env{t: t, url: "http://" + srv.Addr(), keys: srv.Keys()}
	e.member = e.newKey(srv.Keys(), "acme", "member")
	writeTraceMetricsCalls(e)

	var body []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics_listen did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"otelcol_exporter_sent_calls", `weft_app_calls_total{op="chat",project="acme/app",status="error"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics_listen lacks %s:\n%s", want, grepLines(body, "weft_app_"))
		}
	}
	if status, _, _ := e.do(http.MethodGet, "/metrics", "", nil); status == http.StatusOK {
		t.Errorf("the API listener still serves /metrics with metrics_listen set")
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// grepLines is the lines of a scrape holding s, for failure messages.
func grepLines(body []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
