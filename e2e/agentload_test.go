package e2e

import (
	"bufio"
	"bytes"
	"context"
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// startAgent runs `weft agent` forwarding to upstream, buffering in dataDir.
func startAgent(t *testing.T, dataDir, upstream string, extra ...string) *process {
	t.Helper()
	args := append([]string{"agent", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", dataDir, "--upstream", upstream}, extra...)
	return startWeftArgs(t, args)
}

// ackLedger records what the agent acknowledged, in order.
type ackLedger struct {
	mu      sync.Mutex
	started map[string]bool   // call id -> its start was acknowledged
	ended   map[string]bool   // call id -> its end was acknowledged
	renamed map[string]string // call id -> the last display name acknowledged
	spans   map[string]bool   // span (call) id -> acknowledged
}

func newAckLedger() *ackLedger {
	return &ackLedger{started: map[string]bool{}, ended: map[string]bool{}, renamed: map[string]string{}, spans: map[string]bool{}}
}

func (l *ackLedger) note(m map[string]bool, ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		m[id] = true
	}
}

func (l *ackLedger) rename(id, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.renamed[id] = name
}

func (l *ackLedger) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.started) + len(l.spans)
}

// weaveLoad writes calls through the agent in separate requests, start,
// then end, then two renames of the first call, so the center's final
// state shows whether they were applied in order. It sends to the agent
// url holds at the time, and keeps going (pausing) while no agent runs.
func weaveLoad(url *atomic.Value, key, project string, worker int, stop <-chan struct{}, l *ackLedger) {
	c := &client{key: key, http: &http.Client{Timeout: 10 * time.Second}}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		c.base = url.Load().(string)
		ids, starts, ends := splitBatch(project, fmt.Sprintf("w%d-b%d", worker, n), 10)
		if !postAcked(c, "/call/upsert_batch", starts) {
			continue
		}
		l.note(l.started, ids...)
		if !postAcked(c, "/call/upsert_batch", ends) {
			continue
		}
		l.note(l.ended, ids...)
		for _, name := range []string{"first", "second"} {
			body, _ := json.Marshal(map[string]any{"project_id": project, "call_id": ids[0], "display_name": name + "-" + ids[0]})
			if !postAcked(c, "/call/update", body) {
				break
			}
			l.rename(ids[0], name+"-"+ids[0])
		}
	}
}

// postAcked reports whether the agent acknowledged the request; a refused
// or failed one is followed by a short pause.
func postAcked(c *client, path string, body []byte) bool {
	status, err := c.tryPost(path, body)
	if err == nil && status == http.StatusOK {
		return true
	}
	time.Sleep(20 * time.Millisecond)
	return false
}

func splitBatch(project, prefix string, n int) (ids []string, starts, ends []byte) {
	ids, body := upsertBody(project, prefix, n)
	var all struct {
		Batch []json.RawMessage `json:"batch"`
	}
	_ = json.Unmarshal(body, &all)
	var s, e []json.RawMessage
	for i, item := range all.Batch {
		if i%2 == 0 {
			s = append(s, item)
		} else {
			e = append(e, item)
		}
	}
	starts, _ = json.Marshal(map[string]any{"batch": s})
	ends, _ = json.Marshal(map[string]any{"batch": e})
	return ids, starts, ends
}

// spanLoad exports batches of spans with known ids through the OTel SDK's
// OTLP/HTTP exporter, without a key (the agent adds its configured one)
// and without the exporter's own retries, so a nil error is one
// acknowledgement.
func spanLoad(url *atomic.Value, project string, worker int, stop <-chan struct{}, l *ackLedger) {
	res := resource.NewSchemaless(attribute.String("wandb.entity", "sidecar"), attribute.String("wandb.project", project))
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(url.Load().(string)+"/otel/v1/traces"),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}), otlptracehttp.WithTimeout(10*time.Second))
		if err != nil {
			panic(err)
		}
		stubs, ids := spanStubs(res, worker, n, 20)
		if exp.ExportSpans(context.Background(), stubs.Snapshots()) == nil {
			l.note(l.spans, ids...)
		} else {
			time.Sleep(20 * time.Millisecond)
		}
		_ = exp.Shutdown(context.Background())
	}
}

func spanStubs(res *resource.Resource, worker, batch, n int) (tracetest.SpanStubs, []string) {
	var stubs tracetest.SpanStubs
	var ids []string
	now := time.Now()
	for i := range n {
		var tid trace.TraceID
		var sid trace.SpanID
		be.BigEndian.PutUint32(tid[:], uint32(worker+1))
		be.BigEndian.PutUint32(tid[4:], uint32(batch))
		be.BigEndian.PutUint16(sid[:], uint16(worker+1))
		be.BigEndian.PutUint32(sid[2:], uint32(batch))
		be.BigEndian.PutUint16(sid[6:], uint16(i+1))
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
		stubs = append(stubs, tracetest.SpanStub{Name: fmt.Sprintf("llm-%d", i), SpanContext: sc, StartTime: now,
			EndTime: now.Add(time.Millisecond), Resource: res, Attributes: []attribute.KeyValue{attribute.String("gen_ai.system", "openai")}})
		ids = append(ids, sid.String())
	}
	return stubs, ids
}

// storedRow is one call as the center serves it.
type storedRow struct {
	ID          string  `json:"id"`
	EndedAt     *string `json:"ended_at"`
	DisplayName *string `json:"display_name"`
}

// readRows reads every call of project, one entry per row served, so a
// duplicated call shows as two entries.
func readRows(t *testing.T, c *client, project string) []storedRow {
	t.Helper()
	status, body := c.post("/calls/stream_query", map[string]any{"project_id": project, "columns": []string{"id", "ended_at", "display_name"}})
	if status != http.StatusOK {
		t.Fatalf("stream_query = %d: %s", status, body)
	}
	var out []storedRow
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r storedRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}
