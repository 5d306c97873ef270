package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

// weft is a real weft (embedded DuckDB, full pipeline) behind a test
// HTTP server, with a member, an admin and a worker key of entity acme.
// It trains one base model and may call webhooks on loopback.
type weft struct {
	url, key, admin, worker string
}

// startWeft starts a weft; each of configure changes its configuration
// first.
func startWeft(t testing.TB, configure ...func(*config.Config)) weft {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Training.BaseModels = []string{baseModel}
	cfg.Automations.AllowedNetworks = []string{"127.0.0.0/8"}
	cfg.Automations.PollInterval = 50 * time.Millisecond
	for _, c := range configure {
		c(&cfg)
	}
	srv, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	keyOf := func(role auth.Role) string {
		k, secret, err := auth.NewKey("acme", role, "ada", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Keys().PutKey(context.Background(), k); err != nil {
			t.Fatal(err)
		}
		return secret
	}
	return weft{url: hs.URL, key: keyOf(auth.RoleMember), admin: keyOf(auth.RoleAdmin), worker: keyOf(auth.RoleWorker)}
}

// count is how many calls a project holds; reads wait for every
// acknowledged write.
func (w weft) count(t testing.TB, project string) int64 {
	t.Helper()
	var st struct{ Count int64 }
	if err := json.Unmarshal(w.post(t, "/calls/query_stats", map[string]any{"project_id": project}), &st); err != nil {
		t.Fatal(err)
	}
	return st.Count
}

// post sends a JSON body with the key, fails the test unless 200 and
// returns the answer.
func (w weft) post(t testing.TB, path string, body any) []byte {
	t.Helper()
	return w.send(t, http.MethodPost, path, w.key, body)
}

// send sends a JSON body (raw bytes as they are) with key and extra
// headers (name, value, ...), fails the test unless 200 and returns the
// answer.
func (w weft) send(t testing.TB, method, path, key string, body any, hdr ...string) []byte {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, w.url+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("api", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s = %d (%v): %s", method, path, resp.StatusCode, err, out)
	}
	return out
}

// callOps is one call's start and end for /call/upsert_batch.
func callOps(id, trace, parent, op string, start time.Time, dur time.Duration, inputs, summary map[string]any, exc string) []map[string]any {
	s := map[string]any{"project_id": "acme/app", "id": id, "trace_id": trace, "op_name": op,
		"started_at": start.UTC().Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": inputs}
	if parent != "" {
		s["parent_id"] = parent
	}
	e := map[string]any{"project_id": "acme/app", "id": id, "ended_at": start.Add(dur).UTC().Format(time.RFC3339Nano),
		"output": map[string]any{"answer": "Paris"}, "summary": summary}
	if exc != "" {
		e["exception"] = exc
	}
	return []map[string]any{{"mode": "start", "req": map[string]any{"start": s}}, {"mode": "end", "req": map[string]any{"end": e}}}
}

// ingestWeave writes, through the Weave API, a "chat" trace (retrieve and
// llm children: retrieve's input holds a ref to the dataset "evals", the
// llm uses gpt-4o and has a note), a failed "chat" root and an "index"
// root, all within the last minutes.
func ingestWeave(t testing.TB, w weft, now time.Time) {
	usage := map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{
		"requests": 1, "prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}}}
	var batch []map[string]any
	for _, ops := range [][]map[string]any{
		callOps("root-1", "trace-1", "", "chat", now.Add(-4*time.Minute), 2*time.Second,
			map[string]any{"question": "What is the capital of France?"}, map[string]any{}, ""),
		callOps("child-retrieve", "trace-1", "root-1", "retrieve", now.Add(-4*time.Minute+100*time.Millisecond), 400*time.Millisecond,
			map[string]any{"query": "capital France", "index": "weave:///acme/app/object/evals"}, map[string]any{}, ""),
		callOps("child-llm", "trace-1", "root-1", "llm", now.Add(-4*time.Minute+600*time.Millisecond), time.Second,
			map[string]any{"prompt": "Answer briefly"}, usage, ""),
		callOps("root-2", "trace-2", "", "chat", now.Add(-3*time.Minute), 500*time.Millisecond,
			map[string]any{"question": "Tell me a joke"}, map[string]any{}, "TimeoutError: model too slow"),
		callOps("root-3", "trace-3", "", "index", now.Add(-2*time.Minute), 3*time.Second,
			map[string]any{"docs": 12}, map[string]any{}, ""),
	} {
		batch = append(batch, ops...)
	}
	first := batch[0]["req"].(map[string]any)["start"].(map[string]any)
	first["thread_id"], first["turn_id"] = "thread-1", "root-1"
	w.post(t, "/call/upsert_batch", map[string]any{"batch": batch})
	w.post(t, "/feedback/create", map[string]any{"project_id": "acme/app", "weave_ref": "weave:///acme/app/call/child-llm",
		"feedback_type": "wandb.note.1", "payload": map[string]any{"note": "short and right"}})
}

// ingestOTLP exports one span with the OpenTelemetry SDK over OTLP/HTTP.
func ingestOTLP(t testing.TB, w weft) {
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(w.url+"/otel/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"wandb-api-key": w.key, "project_id": "acme/app"}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "ui-test"))))
	_, span := tp.Tracer("ui-test").Start(context.Background(), "otel.agent")
	span.SetAttributes(attribute.String("gen_ai.request.model", "gpt-4o"), attribute.Int("gen_ai.usage.input_tokens", 21))
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("export: %v", err)
	}
}

// ingestDataset publishes a dataset of two rows (a table and the object
// naming it) and a second version with an alias.
func ingestDataset(t testing.TB, w weft) {
	var table struct{ Digest string }
	rows := []map[string]any{{"question": "2+2?", "expected": "4"}, {"question": "capital of France?", "expected": "Paris"}}
	if err := json.Unmarshal(w.post(t, "/table/create", map[string]any{"table": map[string]any{"project_id": "acme/app", "rows": rows}}), &table); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first", "second"} {
		val := map[string]any{"_type": "Dataset", "_class_name": "Dataset", "_bases": []string{"Object", "BaseModel"},
			"name": name, "rows": "weave:///acme/app/table/" + table.Digest}
		w.post(t, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": "evals", "val": val}})
	}
}
