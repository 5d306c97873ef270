package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// devstack runs weft-devstack and returns its Kafka and ClickHouse
// addresses.
func devstack(t *testing.T) (kafka, clickhouse string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weft-devstack")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/weft-devstack").CombinedOutput(); err != nil {
		t.Fatalf("build weft-devstack: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--dir", t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for (kafka == "" || clickhouse == "") && sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "KAFKA="); ok {
			kafka = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "CLICKHOUSE="); ok {
			clickhouse = v
		}
	}
	if kafka == "" || clickhouse == "" {
		t.Fatalf("weft-devstack did not print its addresses; stderr:\n%s", stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return kafka, clickhouse
}

// startRole runs `weft serve` with the given roles against the stack.
func startRole(t *testing.T, roles, kafka, dsn string) *process {
	t.Helper()
	p := startWeftArgs(t, []string{"serve", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", t.TempDir(), "--roles", roles, "--kafka-brokers", kafka, "--clickhouse-dsn", dsn})
	return p
}

// TestScaleOutRoles runs ingest, process and query as three processes on
// Kafka and ClickHouse: calls and OTLP spans written at the ingest role are
// served, each exactly once, by the query role.
func TestScaleOutRoles(t *testing.T) {
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	out, err := exec.Command(binary(t), "keys", "create", "--clickhouse-dsn", dsn, "--entity", "acme").CombinedOutput()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	key := lines[len(lines)-1]
	ingest := startRole(t, "ingest", kafka, dsn)
	startRole(t, "process", kafka, dsn)
	query := startRole(t, "query", kafka, dsn)

	in := newClient(t, ingest.URL, key)
	var want []string
	for b := range 4 {
		ids, body := upsertBody("acme/scale", fmt.Sprintf("b%d", b), 50)
		in.mustPost("/call/upsert_batch", body, nil)
		want = append(want, ids...)
	}
	sendSpans(t, ingest.URL, key, 5)

	q := newClient(t, query.URL, key)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var stats struct {
			Count int `json:"count"`
		}
		q.mustPost("/calls/query_stats", map[string]any{"project_id": "acme/scale"}, &stats)
		if stats.Count == len(want)+5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("query role sees %d calls, want %d", stats.Count, len(want)+5)
		}
		time.Sleep(200 * time.Millisecond)
	}
	got := readAllCalls(t, q, "acme/scale")
	if len(got) != len(want)+5 {
		t.Fatalf("stream returned %d distinct calls, want %d", len(got), len(want)+5)
	}
	for _, id := range want {
		if c, ok := got[id]; !ok || c.EndedAt == nil {
			t.Fatalf("call %s missing or without its end", id)
		}
	}
	for _, p := range []*process{ingest, query} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := <-p.done; err != nil {
			t.Fatalf("role exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	}
}

func sendSpans(t *testing.T, base, key string, n int) {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(base+"/otel/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"wandb-api-key": key, "project_id": "acme/scale"}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "scale"))))
	for i := range n {
		_, span := tp.Tracer("e2e").Start(context.Background(), fmt.Sprintf("span-%d", i))
		span.End()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("export spans: %v", err)
	}
}
