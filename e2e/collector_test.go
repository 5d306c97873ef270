package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weftdev/weft/internal/kafkatest"
)

var (
	otelcolOnce sync.Once
	otelcolBin  string
	otelcolErr  error
)

// otelcol returns the Collector built by ocb from examples/collector/
// manifest.yaml: WEFT_OTELCOL (scripts/test.sh sets it), or the install
// script's cached build. A missing builder fails the test.
func otelcol(t *testing.T) string {
	t.Helper()
	otelcolOnce.Do(func() {
		if otelcolBin = os.Getenv("WEFT_OTELCOL"); otelcolBin != "" {
			return
		}
		out, err := exec.Command("../scripts/install-otelcol.sh").Output()
		lines := strings.Fields(string(out))
		if err != nil || len(lines) == 0 {
			otelcolErr = err
			return
		}
		otelcolBin = lines[len(lines)-1]
	})
	if otelcolErr != nil || otelcolBin == "" {
		t.Fatalf("no Collector binary: set WEFT_OTELCOL or run scripts/install-otelcol.sh (%v)", otelcolErr)
	}
	return otelcolBin
}

// startCollector runs the Collector with the repo's example config,
// exporting to weft, and waits until its OTLP receivers listen.
func startCollector(t *testing.T, weftURL, key, project string) (grpcAddr, httpAddr string) {
	t.Helper()
	grpcAddr, httpAddr = kafkatest.DeadAddr(t), kafkatest.DeadAddr(t)
	conf, err := filepath.Abs("../examples/collector/otlphttp.yaml")
	must(t, err)
	cmd := exec.Command(otelcol(t), "--config", conf)
	cmd.Env = append(os.Environ(), "WEFT_URL="+weftURL, "WEFT_API_KEY="+key, "WEFT_PROJECT="+project,
		"OTLP_GRPC_ENDPOINT="+grpcAddr, "OTLP_HTTP_ENDPOINT="+httpAddr)
	var logs strings.Builder
	cmd.Stderr = &logs
	must(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("Collector log:\n%s", logs.String())
		}
	})
	for _, addr := range []string{grpcAddr, httpAddr} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			select {
			case <-done:
				t.Fatalf("the Collector exited before listening")
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("the Collector did not listen on %s within 30s", addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return grpcAddr, httpAddr
}

// TestStockCollectorFeedsWeft sends spans through a Collector built by ocb
// (core OTLP receiver, batch processor, otlphttp exporter, configured by
// examples/collector/otlphttp.yaml) to a running weft, over both OTLP
// transports, and reads every span back as one call: placed by the
// resource's wandb attributes when the exporter sends no project_id
// header, and by that header when it does.
func TestStockCollectorFeedsWeft(t *testing.T) {
	center := startWeft(t, t.TempDir())
	ctx := context.Background()
	cases := []struct {
		name, header, project string
		grpc                  bool
		res                   *resource.Resource
	}{
		{"resource attributes over OTLP/HTTP", "", "collector/resource", false,
			resource.NewSchemaless(attribute.String("wandb.entity", "collector"), attribute.String("wandb.project", "resource"))},
		{"project_id header over OTLP/gRPC", "collector/header", "collector/header", true,
			resource.NewSchemaless(attribute.String("service.name", "app"))},
	}
	q := newClient(t, center.URL, center.AdminKey)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			grpcAddr, httpAddr := startCollector(t, center.URL, center.AdminKey, tc.header)
			var exp sdktrace.SpanExporter
			var err error
			if tc.grpc {
				exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
			} else {
				exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+httpAddr+"/v1/traces"))
			}
			must(t, err)
			stubs, ids := spanStubs(tc.res, 10+i, 0, 50)
			if err := exp.ExportSpans(ctx, stubs.Snapshots()); err != nil {
				t.Fatalf("exporting to the Collector: %v", err)
			}
			must(t, exp.Shutdown(ctx))
			waitVisible(t, q, tc.project, ids)
			rows := map[string]int{}
			for _, r := range readRows(t, q, tc.project) {
				rows[r.ID]++
			}
			for _, id := range ids {
				if rows[id] != 1 {
					t.Errorf("span %s is %d calls in %s, want 1", id, rows[id], tc.project)
				}
			}
			if len(rows) != len(ids) {
				t.Errorf("%s holds %d calls, want the %d spans sent", tc.project, len(rows), len(ids))
			}
		})
	}
}
