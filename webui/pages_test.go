package webui_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/webui"
)

func TestIsPage(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/", true},
		{"/signin", true},
		{"/acme/demo/calls", true},
		{"/acme/demo/calls/0192-abc", true},
		{"/acme/demo/charts", true},
		{"/acme/demo/threads/th-1", true},
		{"/acme/demo/objects/model/abc123", true},
		{"/acme/demo/datasets", true},
		{"/acme/demo/automations", true},
		{"/acme/demo/alerts", true},
		{"/acme/demo/alerts/au-1", true},
		{"/acme/demo/alerts/au-1/x", false},
		{"/acme/demo/calls/", false},
		{"/acme/demo/calls/a/b", false},
		{"/acme/demo/datasets/a/b", false},
		{"/acme//calls", false},
		{"//demo/calls", false},
		{"/acme/demo", false},
		{"/acme/demo/unknown", false},
		{"/calls/stream_query", false},
		{"/health", false},
		{"/v2/acme/demo/calls/complete", false},
		{"/metrics", false},
		{"/acme/demo/training", true},
		{"/acme/demo/training/0b7e-job", true},
		{"/acme/demo/models/0b7e-model", true},
		{"/acme/demo/playground", true},
		{"/v1/preview/models", false},
		{"/v1/preview/models/0b7e-model", false},
		{"/v1/models/training", false},
		{"/debug/pprof/models", false},
	} {
		if got := webui.IsPage(tc.path); got != tc.want {
			t.Errorf("IsPage(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func FuzzIsPage(f *testing.F) {
	for _, s := range []string{"/", "/a/b/calls", "/a/b/objects/c/d", "/health", "//x/y/calls", "/a/b/calls/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if !webui.IsPage(path) || path == "/" || path == "/signin" {
			return
		}
		// A project page always names an entity, a project and a known page.
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		if len(segs) < 3 || len(segs) > 5 || segs[0] == "" || segs[1] == "" || segs[len(segs)-1] == "" {
			t.Fatalf("IsPage(%q) accepted a malformed address", path)
		}
	})
}

// apiStub stands for the API: it answers 418 so a test sees who served.
var apiStub = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })

func TestHandlerRoutes(t *testing.T) {
	ui, err := webui.New(apiStub)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string
	}{
		{http.MethodGet, "/", http.StatusOK, "text/html; charset=utf-8"},
		{http.MethodGet, "/acme/demo/calls/c1", http.StatusOK, "text/html; charset=utf-8"},
		{http.MethodHead, "/acme/demo/charts", http.StatusOK, "text/html; charset=utf-8"},
		{http.MethodGet, "/ui/js/main.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{http.MethodGet, "/ui/css/style.css", http.StatusOK, "text/css; charset=utf-8"},
		{http.MethodGet, "/ui/js/missing.js", http.StatusNotFound, ""},
		{http.MethodGet, "/ui/js/", http.StatusNotFound, ""},
		{http.MethodGet, "/ui/js", http.StatusNotFound, ""},
		{http.MethodGet, "/ui/css/", http.StatusNotFound, ""},
		{http.MethodGet, "/ui/", http.StatusNotFound, ""},
		{http.MethodHead, "/ui/js/", http.StatusNotFound, ""},
		{http.MethodGet, "/ui/js/../", http.StatusNotFound, ""},
		{http.MethodPost, "/acme/demo/calls", http.StatusTeapot, ""},
		{http.MethodGet, "/calls/stream_query", http.StatusTeapot, ""},
		{http.MethodGet, "/health", http.StatusTeapot, ""},
		{http.MethodGet, "/acme/demo/training/j1", http.StatusOK, "text/html; charset=utf-8"},
		{http.MethodGet, "/v1/preview/models", http.StatusTeapot, ""},
		{http.MethodGet, "/v1/preview/models/m1", http.StatusTeapot, ""},
	} {
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		if tc.contentType != "" && rec.Header().Get("Content-Type") != tc.contentType {
			t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, rec.Header().Get("Content-Type"), tc.contentType)
		}
		if tc.status == http.StatusOK && rec.Header().Get("Content-Security-Policy") != webui.ContentSecurityPolicy {
			t.Errorf("%s %s: no Content-Security-Policy", tc.method, tc.path)
		}
	}
}

// TestPolicyAllowsOnlySelf keeps every fetch directive on 'self' (or
// none): a policy that named another origin would let the key leave.
func TestPolicyAllowsOnlySelf(t *testing.T) {
	for _, d := range strings.Split(webui.ContentSecurityPolicy, ";") {
		fields := strings.Fields(d)
		for _, src := range fields[1:] {
			if src != "'self'" && src != "'none'" && src != "data:" {
				t.Errorf("directive %q allows %s", fields[0], src)
			}
		}
	}
	if !strings.Contains(webui.ContentSecurityPolicy, "connect-src 'self'") {
		t.Error("connect-src must be 'self'")
	}
}
