package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	kafka, clickhouse, _ = devstackStoppable(t)
	return kafka, clickhouse
}

// devstackStoppable is devstack with a function that stops the stack.
func devstackStoppable(t *testing.T) (kafka, clickhouse string, stop func()) {
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
	var once sync.Once
	stop = func() { once.Do(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }) }
	t.Cleanup(stop)
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
	return kafka, clickhouse, stop
}

// createKey makes a key for entity acme in ClickHouse with the CLI.
func createKey(t *testing.T, dsn string) string {
	t.Helper()
	out, err := exec.Command(binary(t), "keys", "create", "--clickhouse-dsn", dsn, "--entity", "acme").CombinedOutput()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// startRole runs `weft serve` with the given roles against the stack.
func startRole(t *testing.T, roles, kafka, dsn string) *process {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "weft.yaml")
	// A short ack timeout so a test of Kafka going away does not wait 10s.
	if err := os.WriteFile(cfg, []byte("kafka:\n  producer:\n    ack_timeout: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return startWeftArgs(t, []string{"serve", "--config", cfg, "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", t.TempDir(), "--roles", roles, "--kafka-brokers", kafka, "--clickhouse-dsn", dsn})
}

// TestScaleOutRoles runs ingest, process and query as three processes on
// Kafka and ClickHouse: calls and OTLP spans written at the ingest role are
// served, each exactly once, by the query role.
func TestScaleOutRoles(t *testing.T) {
	kafka, ch, stopStack := devstackStoppable(t)
	dsn := ch + "/weft"
	key := createKey(t, dsn)
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
	checkKafkaOutage(t, ingest, key, stopStack)
	for _, p := range []*process{ingest, query} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := <-p.done; err != nil {
			t.Fatalf("role exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	}
}

// checkKafkaOutage stops the stack under a running ingest role and expects
// calls to be refused with 503 and Retry-After, never acknowledged.
func checkKafkaOutage(t *testing.T, ingest *process, key string, stopStack func()) {
	t.Helper()
	stopStack()
	_, body := upsertBody("acme/scale", "outage", 5)
	req, err := http.NewRequest(http.MethodPost, ingest.URL+"/call/upsert_batch", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("write with Kafka down = %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func sendSpans(t *testing.T, base, key string, n int) {
	t.Helper()
	sendSpansTo(t, base, key, "acme/scale", n)
}

// sendSpansTo exports n spans to project through the OTel SDK's OTLP/HTTP
// exporter and waits until they are acknowledged.
func sendSpansTo(t *testing.T, base, key, project string, n int) {
	t.Helper()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(base+"/otel/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"wandb-api-key": key, "project_id": project}))
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

// TestScaleOutProcessorKilledAndRebalanced runs two processors in one
// group, SIGKILLs one while calls flow, and checks that every acknowledged
// call is served exactly once after the survivor takes over. The victim is
// known to have consumed records and to own partitions when it dies:
// otherwise the test would prove nothing about a takeover.
func TestScaleOutProcessorKilledAndRebalanced(t *testing.T) {
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	key := createKey(t, dsn)
	ingest := startRole(t, "ingest", kafka, dsn)
	query := startRole(t, "query", kafka, dsn)
	victim := startRole(t, "process", kafka, dsn)
	in, q := newClient(t, ingest.URL, key), newClient(t, query.URL, key)
	sent := map[string][]string{}
	send := func(project string, from, to int) {
		for b := from; b < to; b++ {
			ids, body := upsertBody(project, fmt.Sprintf("k%d", b), 40)
			in.mustPost("/call/upsert_batch", body, nil)
			sent[project] = append(sent[project], ids...)
		}
	}

	// Alone in the group, the victim consumes the first calls.
	send("acme/warm", 0, 2)
	waitVisible(t, q, "acme/warm", sent["acme/warm"])
	var victimID string
	for id := range waitAssigned(t, kafka, 1) {
		victimID = id
	}
	// The survivor joins; the victim keeps some partitions, and the calls
	// that follow go to one of them.
	startRole(t, "process", kafka, dsn)
	assigned := waitAssigned(t, kafka, 2)
	owned := assigned[victimID]
	if len(owned) == 0 {
		t.Fatalf("after the rebalance the victim (member %s) owns no partitions: %v", victimID, assigned)
	}
	total := 0
	for _, parts := range assigned {
		total += len(parts)
	}
	project := projectOn(t, owned, total)
	send(project, 2, 5)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	send(project, 5, 10)

	for p, want := range sent {
		got := waitVisible(t, q, p, want)
		var stats struct {
			Count int `json:"count"`
		}
		q.mustPost("/calls/query_stats", map[string]any{"project_id": p}, &stats)
		if stats.Count != len(want) || len(got) != len(want) {
			t.Fatalf("%s: stored %d calls (%d distinct), want exactly %d", p, stats.Count, len(got), len(want))
		}
	}
}

// waitVisible waits until every call of want is served with its end and
// returns what the query role serves.
func waitVisible(t *testing.T, q *client, project string, want []string) map[string]callRow {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		got := readAllCalls(t, q, project)
		missing := ""
		for _, id := range want {
			if c, ok := got[id]; !ok || c.EndedAt == nil {
				missing = id
				break
			}
		}
		if missing == "" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s missing or without its end (%d of %d visible)", missing, len(got), len(want))
		}
		time.Sleep(250 * time.Millisecond)
	}
}
