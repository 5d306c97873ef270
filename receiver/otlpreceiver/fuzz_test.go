package otlpreceiver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftdev/weft/internal/telemetry"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// FuzzHTTPHandler drives the whole HTTP decode path (decompression,
// protobuf/JSON decoding, mapping) with arbitrary bodies. The receiver
// must answer 200 or a 4xx with a well-formed body, never 5xx or a crash.
func FuzzHTTPHandler(f *testing.F) {
	for _, name := range []string{"19-otel-protobuf-current.bin", "20-otel-protobuf-legacy.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, byte(0))
		f.Add(gzipped(b), byte(2))
	}
	for _, name := range []string{"21-otel-json-current.json", "22-otel-json-legacy.json"} {
		var fx fixture
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		if err := json.Unmarshal(raw, &fx); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(fx.Request.Body), byte(1))
		f.Add([]byte(fx.Request.Body), byte(5))
	}
	f.Add([]byte("\x0a\x02\x0a\x00"), byte(4))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), byte(1))

	h := NewHTTPHandler(Config{MaxRequestBytes: 1 << 16, MaxAttributeValueBytes: 64}, testKeys(), &recorder{}, telemetry.Settings{})
	f.Fuzz(func(t *testing.T, body []byte, mode byte) {
		req := httptest.NewRequest(http.MethodPost, TracesPath, bytes.NewReader(body))
		req.Header.Set("Wandb-Api-Key", fixtureKey)
		req.Header.Set("Content-Type", "application/x-protobuf")
		if mode&1 != 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		if mode&2 != 0 {
			req.Header.Set("Content-Encoding", "gzip")
		}
		if mode&4 != 0 {
			req.Header.Set("project_id", "acme/fuzz")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200:
			resp := ptraceotlp.NewExportResponse()
			var err error
			if mode&1 != 0 {
				err = resp.UnmarshalJSON(w.Body.Bytes())
			} else {
				err = resp.UnmarshalProto(w.Body.Bytes())
			}
			if err != nil {
				t.Fatalf("200 with a bad body: %v", err)
			}
		case 400, 403, 413:
			decodeStatus(t, w)
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}
