package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkUpsertBatch measures /call/upsert_batch in process: decoding,
// validation, the queue and the DuckDB commit, 500 calls per request.
func BenchmarkUpsertBatch(b *testing.B) {
	e := newEnv(&testing.T{})
	pad := strings.Repeat("x", 220)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		body := benchBatch(i, 500, pad)
		b.SetBytes(int64(len(body)))
		req, _ := http.NewRequest(http.MethodPost, e.url+"/call/upsert_batch", bytes.NewReader(body))
		req.SetBasicAuth("api", e.member)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("upsert: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "calls/s")
}

func benchBatch(n, size int, pad string) []byte {
	now := time.Now().UTC()
	items := make([]map[string]any, 0, 2*size)
	for i := range size {
		id := fmt.Sprintf("b%d-%d", n, i)
		items = append(items,
			map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
				"project_id": "acme/bench", "id": id, "trace_id": fmt.Sprint(n), "op_name": "weave:///acme/bench/op/chat:v1",
				"started_at": now.Format(time.RFC3339Nano), "attributes": map[string]any{"env": "bench"}, "inputs": map[string]any{"prompt": pad}}}},
			map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{
				"project_id": "acme/bench", "id": id, "ended_at": now.Format(time.RFC3339Nano),
				"output": map[string]any{"text": pad}, "summary": map[string]any{}}}})
	}
	body, _ := json.Marshal(map[string]any{"batch": items})
	return body
}
