package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestInflightBoundsBodyBytesAcrossRequests(t *testing.T) {
	f := NewInflight(1000)
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := f.Limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), "/file/")
	post := func(path string, n int, header ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(strings.Repeat("x", n)))
		if len(header) == 2 {
			req.Header.Set(header[0], header[1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	done := make(chan int, 2)
	go func() { done <- post("/call/upsert_batch", 600).Code }()
	<-entered
	for name, tc := range map[string]struct {
		path   string
		n      int
		header []string
		want   int
	}{
		"over the bound while 600 are held": {"/call/upsert_batch", 500, nil, http.StatusTooManyRequests},
		"gzip counts four times":            {"/otel/v1/traces", 150, []string{"Content-Encoding", "gzip"}, http.StatusTooManyRequests},
	} {
		rec := post(tc.path, tc.n, tc.header...)
		if rec.Code != tc.want || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d (Retry-After %q), want %d with Retry-After", name, rec.Code, rec.Header().Get("Retry-After"), tc.want)
		}
	}
	go func() { done <- post("/file/create", 5000).Code }() // streamed: not counted
	<-entered
	go func() { done <- post("/call/upsert_batch", 400).Code }() // fits beside the 600
	<-entered
	close(release)
	for range 3 {
		if code := <-done; code != http.StatusOK {
			t.Fatalf("held request answered %d", code)
		}
	}
	if rec := post("/call/upsert_batch", 5000); rec.Code != http.StatusOK {
		t.Fatalf("a body over the whole bound alone = %d, want it to pass alone", rec.Code)
	}
}
