package forwardexporter

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/receiver/weavereceiver"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
)

// weaveUpstream is a real Weave write API (the receiver a central Weft
// runs, behind real key checks) that records the ops it accepts.
type weaveUpstream struct {
	srv *httptest.Server
	key string
	mu  sync.Mutex
	ops []storage.CallOp
}

func newWeaveUpstream(t *testing.T) *weaveUpstream {
	t.Helper()
	keys, secret := memberKey(t)
	u := &weaveUpstream{key: secret}
	record := func(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.ops = append(u.ops, ops...)
		return make([]storage.CallOpResult, len(ops)), nil
	}
	mux := http.NewServeMux()
	logger := slog.New(slog.DiscardHandler)
	weavereceiver.New(consumerFunc(record), refs.ExtractRefs, 32<<20, logger).Register(mux, func(h http.Handler) http.Handler {
		return httpapi.Authenticate(auth.StoreVerifier{Store: keys}, logger, h)
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

// memberKey is a key store holding one key, a member of entity acme, and
// that key.
func memberKey(t *testing.T) (*auth.FileStore, string) {
	t.Helper()
	keys := auth.NewFileStore(t.TempDir())
	k, secret, err := auth.NewKey("acme", auth.RoleMember, "u1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.PutKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return keys, secret
}

func (u *weaveUpstream) received() []storage.CallOp {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]storage.CallOp(nil), u.ops...)
}

type consumerFunc func(context.Context, []storage.CallOp) ([]storage.CallOpResult, error)

func (f consumerFunc) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	return f(ctx, ops)
}

// TestWeaveSinkDeliversTheSameRecords sends every kind of record through
// the Weave API and checks that the receiver decodes what was buffered:
// the center stores what the agent acknowledged, unchanged.
func TestWeaveSinkDeliversTheSameRecords(t *testing.T) {
	up := newWeaveUpstream(t)
	sink := NewWeaveSink(up.srv.URL, up.srv.Client())
	sent := sampleOps()
	if n, err := sink.Send(context.Background(), up.key, sent); err != nil || n != len(sent) {
		t.Fatalf("Send = %d, %v", n, err)
	}
	got := up.received()
	if len(got) != len(sent) {
		t.Fatalf("upstream received %d records, want %d", len(got), len(sent))
	}
	want := sent
	for i := range want {
		normalise(&got[i], &want[i])
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Errorf("record %d differs upstream:\n got %s\nwant %s", i, g, w)
		}
	}
}

// normalise clears what the center sets itself: the caller's user id and
// a delete's time.
func normalise(got, want *storage.CallOp) {
	switch {
	case got.Part != nil:
		got.Part.Call.WBUserID = ""
		got.Part.Call.InputRefs, got.Part.Call.OutputRefs = nil, nil
	case got.Update != nil:
		got.Update.WBUserID = ""
	case got.Delete != nil && want.Delete != nil:
		got.Delete.WBUserID, got.Delete.At = "", want.Delete.At
	}
}

func TestWeaveSinkClassifiesAnswers(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		retryAfter string
		permanent  bool
		wait       time.Duration
	}{
		{"accepted", http.StatusOK, "", false, 0},
		{"overloaded with Retry-After", http.StatusTooManyRequests, "3", false, 3 * time.Second},
		{"unavailable with Retry-After", http.StatusServiceUnavailable, "1", false, time.Second},
		{"server error", http.StatusInternalServerError, "", false, 0},
		{"timeout", http.StatusRequestTimeout, "", false, 0},
		{"bad request", http.StatusBadRequest, "", true, 0},
		{"unknown key", http.StatusUnauthorized, "", true, 0},
		{"no access", http.StatusForbidden, "", true, 0},
		{"too large", http.StatusRequestEntityTooLarge, "", true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer k" {
					t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
				}
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(`{"reason":"because"}`))
			}))
			defer srv.Close()
			_, err := NewWeaveSink(srv.URL, srv.Client()).Send(context.Background(), "k", sampleOps()[:1])
			if (err == nil) != (tc.status == http.StatusOK) {
				t.Fatalf("Send = %v for %d", err, tc.status)
			}
			if isPermanent(err) != tc.permanent || retryAfter(err) != tc.wait {
				t.Fatalf("Send = %v: permanent %v, retry after %s; want %v, %s", err, isPermanent(err), retryAfter(err), tc.permanent, tc.wait)
			}
			var p *PermanentError
			if errors.As(err, &p) && p.Status != tc.status {
				t.Fatalf("PermanentError.Status = %d, want %d", p.Status, tc.status)
			}
		})
	}
}
