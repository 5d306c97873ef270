package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

// env is an in-process weft with keys of each kind.
type env struct {
	t                           *testing.T
	url                         string
	admin, member, viewer, evil string
	client                      *http.Client // nil: http.DefaultClient
	keys                        auth.KeyStore
}

func newEnv(t *testing.T, mutate ...func(*config.Config)) *env {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	for _, m := range mutate {
		m(&cfg)
	}
	ctx := context.Background()
	srv, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
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
	e := &env{t: t, url: hs.URL, keys: srv.Keys()}
	e.admin, err = auth.EnsureAdminKey(ctx, srv.Keys(), cfg.DataDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.member = e.newKey(srv.Keys(), "acme", auth.RoleMember)
	e.viewer = e.newKey(srv.Keys(), "acme", auth.RoleViewer)
	e.evil = e.newKey(srv.Keys(), "evil", auth.RoleAdmin)
	return e
}

func (e *env) newKey(store auth.KeyStore, entity string, role auth.Role) string {
	k, secret, err := auth.NewKey(entity, role, "", time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if err := store.PutKey(context.Background(), k); err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// do sends a request with the given key (empty: none) and returns status,
// headers and body.
func (e *env) do(method, path, key string, body any, hdr ...string) (int, http.Header, []byte) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth("api", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.httpClient().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// httpClient is the env's client, http.DefaultClient unless set.
func (e *env) httpClient() *http.Client {
	if e.client != nil {
		return e.client
	}
	return http.DefaultClient
}

// ok posts as the member key and decodes a 200 answer into v.
func (e *env) ok(path string, body, v any) {
	e.t.Helper()
	status, _, out := e.do(http.MethodPost, path, e.member, body)
	if status != http.StatusOK {
		e.t.Fatalf("POST %s = %d: %s", path, status, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			e.t.Fatalf("POST %s: %v in %s", path, err, out)
		}
	}
}

func TestServiceEndpointsNeedNoKey(t *testing.T) {
	e := newEnv(t)
	for path, want := range map[string]string{
		"/health":      `"status":"ok"`,
		"/version":     `"version":"` + app.Version,
		"/server_info": `"min_required_weave_python_version":"0.0.0"`,
		"/geolocate":   `"source":"local"`,
	} {
		status, _, body := e.do(http.MethodGet, path, "", nil)
		if status != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %s; want 200 containing %s", path, status, body, want)
		}
	}
}

// TestServerInfoReportsProtocolVersion: the SDKs compare
// trace_server_version with their minimum as MAJOR.MINOR.PATCH numbers, so
// it must be the protocol's version in that form, whatever Weft's release.
func TestServerInfoReportsProtocolVersion(t *testing.T) {
	e := newEnv(t)
	var info struct {
		TraceServerVersion string `json:"trace_server_version"`
	}
	status, _, body := e.do(http.MethodGet, "/server_info", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /server_info = %d %s", status, body)
	}
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatal(err)
	}
	if info.TraceServerVersion != app.WeaveProtocolVersion {
		t.Fatalf("trace_server_version = %q; want the protocol version %q", info.TraceServerVersion, app.WeaveProtocolVersion)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(info.TraceServerVersion) {
		t.Fatalf("trace_server_version %q is not MAJOR.MINOR.PATCH", info.TraceServerVersion)
	}
}

func TestAuthRules(t *testing.T) {
	e := newEnv(t)
	read := map[string]any{"project_id": "acme/app"}
	write := map[string]any{"start": map[string]any{"project_id": "acme/app", "op_name": "op", "started_at": "2025-01-01T00:00:00Z", "attributes": map[string]any{}, "inputs": map[string]any{}}}
	tests := []struct {
		name, path, key string
		body            any
		want            int
		hdr             []string
	}{
		{"no key", "/calls/query_stats", "", read, 401, nil},
		{"unknown key", "/calls/query_stats", "weft-nope", read, 401, nil},
		{"member reads", "/calls/query_stats", e.member, read, 200, nil},
		{"viewer reads", "/calls/query_stats", e.viewer, read, 200, nil},
		{"viewer cannot write", "/call/start", e.viewer, write, 403, nil},
		{"other entity cannot read", "/calls/query_stats", e.evil, read, 403, nil},
		{"other entity cannot write", "/call/start", e.evil, write, 403, nil},
		{"instance admin reads any", "/calls/query_stats", e.admin, read, 200, nil},
		{"bearer form", "/calls/query_stats", "", read, 200, []string{"Authorization", "Bearer " + e.member}},
		{"wandb-api-key form", "/calls/query_stats", "", read, 200, []string{"wandb-api-key", e.member}},
		{"malformed project", "/calls/query_stats", e.member, map[string]any{"project_id": "acme"}, 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.do(http.MethodPost, tc.path, tc.key, tc.body, tc.hdr...)
			if status != tc.want {
				t.Fatalf("status = %d (%s), want %d", status, body, tc.want)
			}
			if status >= 400 && !strings.Contains(string(body), `"reason"`) {
				t.Fatalf("error body %s lacks a reason", body)
			}
		})
	}
}

func TestBodyLimitAndEncoding(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.MaxRequestBytes = 2048 })
	big := map[string]any{"project_id": "acme/app", "filter": map[string]any{"call_ids": []string{strings.Repeat("x", 4096)}}}
	if status, _, body := e.do(http.MethodPost, "/calls/query_stats", e.member, big); status != 413 {
		t.Fatalf("oversize body = %d %s, want 413", status, body)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(`{"project_id":"acme/app"}`))
	_ = zw.Close()
	if status, _, body := e.do(http.MethodPost, "/calls/query_stats", e.member, zipped.Bytes(), "Content-Encoding", "gzip"); status != 200 {
		t.Fatalf("gzip body = %d %s, want 200", status, body)
	}
	if status, _, _ := e.do(http.MethodPost, "/calls/query_stats", e.member, "not gzip", "Content-Encoding", "gzip"); status != 400 {
		t.Fatalf("bad gzip = %d, want 400", status)
	}
	if status, _, _ := e.do(http.MethodPost, "/calls/query_stats", e.member, "{}", "Content-Encoding", "br"); status != 415 {
		t.Fatalf("unsupported encoding = %d, want 415", status)
	}
}
