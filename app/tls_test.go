package app_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"google.golang.org/grpc/credentials"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/tlsutil"
)

// newTLSServed runs a listening weft with a self-signed pair on both
// listeners and returns it with a client that trusts only that pair.
func newTLSServed(t *testing.T) (*served, *x509.CertPool) {
	t.Helper()
	pair, err := tlsutil.SelfSigned(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, certFile, pair.CertPEM)
	writeFile(t, keyFile, pair.KeyPEM)
	s := newServed(t, func(c *config.Config) { c.TLSCertFile, c.TLSKeyFile = certFile, keyFile })
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pair.CertPEM)
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	return s, roots
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSListeners drives both listeners over TLS as the SDKs do with
// only WANDB_BASE_URL set: GraphQL at the root, the trace API under
// /traces; OTLP/gRPC with TLS credentials. Plain text is refused.
func TestTLSListeners(t *testing.T) {
	s, roots := newTLSServed(t)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("url %s is not https", s.url)
	}
	var gql struct {
		Data struct {
			Viewer struct{ DefaultEntity struct{ Name string } }
		}
	}
	s.ok("/graphql", map[string]any{"query": "query DefaultEntity { viewer { username defaultEntity { name } } }"}, &gql)
	if gql.Data.Viewer.DefaultEntity.Name != "acme" {
		t.Fatalf("default entity %+v", gql)
	}
	s.ok("/traces/call/upsert_batch", map[string]any{"batch": []any{
		map[string]any{"mode": "start", "req": map[string]any{"start": map[string]any{"project_id": "acme/tls", "id": "c1", "trace_id": "t1",
			"op_name": "chat", "started_at": "2025-01-01T00:00:00Z", "attributes": map[string]any{}, "inputs": map[string]any{"q": "hi"}}}},
		map[string]any{"mode": "end", "req": map[string]any{"end": map[string]any{"project_id": "acme/tls", "id": "c1",
			"ended_at": "2025-01-01T00:00:01Z", "output": "hello", "summary": map[string]any{}}}},
	}}, nil)
	if calls := s.stream(map[string]any{"project_id": "acme/tls"}); len(calls) != 1 || calls[0].ID != "c1" {
		t.Fatalf("calls read back at the root: %+v", calls)
	}
	status, _, body := s.do(http.MethodPost, "/traces/calls/stream_query", s.member, map[string]any{"project_id": "acme/tls"})
	if status != http.StatusOK || !strings.Contains(string(body), `"id":"c1"`) {
		t.Fatalf("/traces/calls/stream_query = %d: %s", status, body)
	}
	if status, _, _ := s.do(http.MethodGet, "/traces/health", "", nil); status != http.StatusOK {
		t.Fatalf("/traces/health = %d", status)
	}

	checkGRPCOverTLS(t, s, roots)
	checkPlainRefused(t, s.url)
}

// checkGRPCOverTLS exports spans with the OpenTelemetry SDK's gRPC
// exporter, trusting only the development certificate.
func checkGRPCOverTLS(t *testing.T, s *served, roots *x509.CertPool) {
	t.Helper()
	grpcExp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(s.grpcAddr),
		otlptracegrpc.WithTLSCredentials(credentials.NewClientTLSFromCert(roots, "localhost")),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": "Bearer " + s.member}))
	if err != nil {
		t.Fatal(err)
	}
	emitAgent(t, grpcExp, "grpc-tls")
	checkAgentCalls(t, s.env, "grpc-tls")
}

// checkPlainRefused: plain HTTP to the TLS listener gets Go's 400.
func checkPlainRefused(t *testing.T, httpsURL string) {
	t.Helper()
	plain, err := http.Get("http://" + strings.TrimPrefix(httpsURL, "https://") + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Body.Close()
	msg, _ := io.ReadAll(plain.Body)
	if plain.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "HTTPS") {
		t.Fatalf("plain HTTP to the TLS port = %d %s", plain.StatusCode, msg)
	}
}

// TestTracesPrefixIsOnlyAPrefix: paths that merely start with "traces"
// are not rewritten, and OTLP keeps its own path.
func TestTracesPrefixIsOnlyAPrefix(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		path   string
		status int
	}{
		{"/traces/server_info", http.StatusOK},
		{"/traces", http.StatusNotFound},
		{"/tracesserver_info", http.StatusNotFound},
		{"/traces/traces/server_info", http.StatusNotFound},
	}
	for _, tt := range tests {
		if status, _, body := e.do(http.MethodGet, tt.path, "", nil); status != tt.status {
			t.Errorf("GET %s = %d, want %d: %s", tt.path, status, tt.status, body)
		}
	}
	var info map[string]any
	status, _, body := e.do(http.MethodGet, "/traces/server_info", "", nil)
	if err := json.Unmarshal(body, &info); err != nil || status != http.StatusOK || info["trace_server_version"] == nil {
		t.Fatalf("server_info under /traces = %d %s", status, body)
	}
}

// TestTLSFilesRefused: a server with a bad pair does not start, and says
// which setting to fix.
func TestTLSFilesRefused(t *testing.T) {
	tests := []struct {
		name       string
		cert, key  string // file contents; "" leaves the file absent
		wantInErrs []string
	}{
		{"missing cert file", "", "k", []string{"tls_cert_file", "does not exist"}},
		{"garbage pair", "not pem", "not pem", []string{"tls_cert_file", "tls_key_file", "weft certs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.DataDir = t.TempDir()
			cfg.TLSCertFile, cfg.TLSKeyFile = filepath.Join(cfg.DataDir, "c.pem"), filepath.Join(cfg.DataDir, "k.pem")
			if tt.cert != "" {
				writeFile(t, cfg.TLSCertFile, []byte(tt.cert))
			}
			writeFile(t, cfg.TLSKeyFile, []byte(tt.key))
			srv, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err == nil {
				_ = srv.Close()
				t.Fatal("started with a bad pair")
			}
			for _, w := range tt.wantInErrs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
