package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
)

// TestOneKeyCannotHoldTheListenerBudget runs the slow-body attack on a
// whole server: a member key declares a 16 MiB body and sends it slowly.
// Other keys' requests, trace writes and gateway requests alike, are not
// refused by the budget and answer quickly; the same key's gateway request
// is refused, because gateway bodies count in the listener's budget; and
// the slow body is cut off with 408.
func TestOneKeyCannotHoldTheListenerBudget(t *testing.T) {
	t.Setenv("WEFT_APP_TEST_KEY", "sk-x")
	e := newEnv(t, func(c *config.Config) {
		c.Inference = gatewayConfig(t, "WEFT_APP_TEST_KEY").Inference
		c.Connections.MaxInflightBytes = 1 << 20
		c.Connections.MaxInflightBytesPerKey = 256 << 10
		c.Connections.MinBodyRate = 32 << 10
		c.Connections.BodyRateGrace = time.Second
	})

	slow, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /call/upsert_batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", e.member, 16<<20)
	start := time.Now()
	if _, err := slow.Write(bytes.Repeat([]byte(" "), 64<<10)); err != nil {
		t.Fatal(err)
	}
	answered := make(chan *http.Response, 1)
	go func() {
		_ = slow.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(slow), nil)
		if err != nil {
			t.Errorf("the slow body got no answer: %v", err)
		}
		answered <- resp
	}()
	go func() { // a few bytes, now and then
		for {
			time.Sleep(100 * time.Millisecond)
			if _, err := slow.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)

	large := strings.Repeat("z", 200<<10)
	batch := map[string]any{"batch": []any{map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{
		"project_id": "evil/p", "id": "c1", "trace_id": "t1", "op_name": "op", "started_at": time.Now().UTC().Format(time.RFC3339Nano),
		"attributes": map[string]any{}, "inputs": map[string]any{"text": large}}}}}}
	for _, tc := range []struct {
		name, path, key string
		body            any
		refused         bool
	}{
		{"another key's large trace write", "/call/upsert_batch", e.evil, batch, false},
		{"another key's large gateway request", "/v1/chat/completions", e.evil, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": large}}}, false},
		{"the slow key's own gateway request", "/v1/chat/completions", e.member, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": large}}}, true},
	} {
		began := time.Now()
		status, header, out := e.do(http.MethodPost, tc.path, tc.key, tc.body)
		took := time.Since(began)
		t.Logf("%s: %d in %s", tc.name, status, took)
		switch {
		case tc.refused && (status != http.StatusTooManyRequests || header.Get("Retry-After") == "" ||
			!strings.Contains(string(out), "connections.max_inflight_bytes_per_key") || !strings.Contains(string(out), `"code":"rate_limit_exceeded"`)):
			t.Errorf("%s: %d %s; want 429 with Retry-After, in the OpenAI shape, naming the setting", tc.name, status, out)
		case !tc.refused && (status == http.StatusTooManyRequests || status == http.StatusRequestTimeout):
			t.Errorf("%s: %d %s while another key sends slowly", tc.name, status, out)
		case took > 2*time.Second:
			t.Errorf("%s took %s while another key sends slowly", tc.name, took)
		}
	}

	resp := <-answered
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	var body map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &body)
	if resp.StatusCode != http.StatusRequestTimeout || body["setting"] != "connections.min_body_rate" {
		t.Fatalf("the slow body: %d %s; want 408 naming connections.min_body_rate", resp.StatusCode, raw)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Fatalf("the slow body was cut off after %s; at 32 KiB/s after 1s it had about 3s", took)
	}
}
