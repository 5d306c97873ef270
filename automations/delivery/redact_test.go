package delivery

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestReflectedSecretsAreRedacted: a receiver that echoes what it got
// (the access token in Authorization, the signing secret in a payload)
// never shows either back in the delivery history or in Send's answer.
func TestReflectedSecretsAreRedacted(t *testing.T) {
	const token, secret = "tok-123", "sign-secret" // the rig's secrets
	tests := []struct {
		name   string
		body   string // the delivery's body
		answer func(w http.ResponseWriter, r *http.Request)
		want   string // in the stored answer or error
	}{
		{"Authorization echoed in the body", `{}`, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "you sent "+r.Header.Get("Authorization"))
		}, "you sent Bearer ****"},
		{"Authorization echoed in headers", `{}`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Authorization", r.Header.Get("Authorization"))
			w.Header().Set("X-Echo", "sent "+token)
			w.WriteHeader(http.StatusBadRequest)
		}, "400 Bad Request"},
		{"token in a redirect", `{}`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "https://example.com/?t="+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			w.WriteHeader(http.StatusFound)
		}, "?t=****"},
		{"signing secret echoed from the payload", `{"check":"` + secret + `"}`, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.Copy(w, r.Body)
		}, `{"check":"****"}`},
		{"token cut at the answer's cap", `{}`, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, strings.Repeat("x", 1024-4)+token) // the rig's sender keeps 1024 bytes
		}, "xxx****"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 5*time.Second)
			srv := httptest.NewServer(http.HandlerFunc(tc.answer))
			t.Cleanup(srv.Close)
			r.webhook(t, "wh1", srv.URL)
			r.delivery(t, "dlv_1", "wh1", tc.body)
			r.runDue(t)
			d := r.get(t, "dlv_1")
			stored := d.LastResponse + "\n" + d.LastError
			if !strings.Contains(stored, tc.want) {
				t.Errorf("stored answer %q, error %q; want %q in them", d.LastResponse, d.LastError, tc.want)
			}
			resp := r.worker.sender.Send(ctx, Request{ID: "t1", URL: srv.URL, Body: []byte(tc.body), Token: token, Secret: secret})
			shown := string(resp.Body) + "\n" + stored
			if resp.Err != nil {
				shown += "\n" + resp.Err.Error()
			}
			for k, vs := range resp.Header {
				shown += "\n" + k + ": " + strings.Join(vs, ", ")
			}
			for _, s := range []string{token, secret, token[:3]} {
				if strings.Contains(shown, s) {
					t.Errorf("%q shown back:\n%s", s, shown)
				}
			}
			if got := resp.Header.Get("Authorization"); got != "" && got != "Bearer ****" {
				t.Errorf("Authorization answered as %q, want Bearer ****", got)
			}
		})
	}
}
