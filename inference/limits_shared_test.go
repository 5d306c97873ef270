package inference

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

// openLimitsStore is a real DuckDB store for the replicas of a test.
func openLimitsStore(t *testing.T) *duckdb.Store {
	t.Helper()
	s, err := duckdb.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// replica is another gateway beside h's: the same catalog, keys, clock
// and traced calls, sharing store as replica name; spend reads the
// budgets' spend (nil: none).
func (h *harness) replica(store storage.InferenceLimitsStore, name string, spend SpendReader) *harness {
	h.t.Helper()
	g := h.gw
	gw, err := New(Options{Config: g.cfg, Catalog: g.catalog, Keys: g.keys, Recorder: h.calls, Inflight: h.inflight,
		Registry: prometheus.NewRegistry(), Logger: g.logger, Limits: store, Replica: name, Spend: spend})
	if err != nil {
		h.t.Fatal(err)
	}
	gw.now = h.clock.now
	mux := http.NewServeMux()
	gw.Register(mux, func(next http.Handler) http.Handler { return httpapi.Authenticate(g.keys, g.logger, next) })
	srv := httptest.NewServer(mux)
	h.t.Cleanup(srv.Close)
	r := *h
	r.url, r.gw = srv.URL, gw
	return &r
}

func syncAll(t *testing.T, replicas ...*harness) {
	t.Helper()
	for _, r := range replicas {
		if err := r.gw.SyncLimits(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRateLimitAcrossReplicas: two gateways sharing a store enforce one
// limit together. Between syncs each counts alone, so together they
// admit at most the limit plus what one replica admits in a sync
// interval (the documented bound for two replicas), and never less than
// the limit.
func TestRateLimitAcrossReplicas(t *testing.T) {
	const limit, perRound = 10, 3
	h := limitedHarness(t, LimitRule{Project: "acme/app", RequestsPerMinute: limit})
	store := openLimitsStore(t)
	a, b := h.replica(store, "a", nil), h.replica(store, "b", nil)
	project := map[string]string{"Service-Project": "acme/app"}
	admitted := 0
	for round := range 10 {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, r := range []*harness{a, b} {
			wg.Add(1)
			go func() { // each replica takes perRound requests in one sync interval
				defer wg.Done()
				for range perRound {
					status, _, out := r.chat(msg("echo-model", "hi", nil), project)
					switch status {
					case http.StatusOK:
						mu.Lock()
						admitted++
						mu.Unlock()
					case http.StatusTooManyRequests:
					default:
						t.Errorf("round %d: %d %s", round, status, out)
					}
				}
			}()
		}
		wg.Wait()
		syncAll(t, a, b)
	}
	if admitted < limit || admitted > limit+(2-1)*perRound {
		t.Fatalf("two replicas admitted %d requests in the window; the limit is %d and the bound %d", admitted, limit, limit+perRound)
	}
	for _, r := range []*harness{a, b} {
		status, header, out := r.chat(msg("echo-model", "hi", nil), project)
		if status != http.StatusTooManyRequests || header.Get("x-ratelimit-remaining-requests") != "0" {
			t.Fatalf("after syncing, a replica still admits: %d %s", status, out)
		}
	}
	h.clock.toNextWindow()
	syncAll(t, a, b)
	for _, r := range []*harness{a, b} {
		if status, header, out := r.chat(msg("echo-model", "hi", nil), project); status != http.StatusOK {
			t.Fatalf("next window: %d %s %v", status, out, header)
		}
	}
	// Each sees the other's request of the new window once both have
	// published and read (a round each way).
	syncAll(t, a, b)
	syncAll(t, a, b)
	_, header, _ := a.chat(msg("echo-model", "hi", nil), project)
	if got := header.Get("x-ratelimit-remaining-requests"); got != strconv.Itoa(limit-3) {
		t.Fatalf("remaining %q after three requests over both replicas, want %d", got, limit-3)
	}
}

// TestLimitsAdminAPI: only an instance-wide admin key reads and sets the
// limits; bad bodies are 400 naming the field; a change is in force at
// once on the replica that took it, on the others after their sync and
// after a restart, and a reset brings back the configuration file's.
func TestLimitsAdminAPI(t *testing.T) {
	h := limitedHarness(t, LimitRule{Project: "acme/app", RequestsPerMinute: 100})
	store := openLimitsStore(t)
	a, b := h.replica(store, "a", nil), h.replica(store, "b", nil)
	admin := map[string]string{"Authorization": "Bearer " + h.adminKey}
	call := func(r *harness, method string, body any, headers map[string]string) (int, []byte) {
		resp := r.do(method, limitsPath, body, headers)
		defer resp.Body.Close()
		out := make([]byte, 0, 512)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				return resp.StatusCode, out
			}
		}
	}
	for _, tc := range []struct {
		name, method, key string
		body              any
		status            int
		want              string
	}{
		{"member reads", http.MethodGet, h.key, nil, http.StatusForbidden, "instance-wide admin key"},
		{"team admin writes", http.MethodPut, h.rivalKey, map[string]any{"limits": []any{}}, http.StatusForbidden, "instance-wide admin key"},
		{"no key", http.MethodGet, "", nil, http.StatusUnauthorized, ""},
		{"unknown top-level field", http.MethodPut, h.adminKey, map[string]any{"limit": []any{}}, 0, "limit"},
		{"misspelt rule field", http.MethodPut, h.adminKey, map[string]any{"limits": []any{map[string]any{"project": "acme/app", "request_per_minute": 5}}}, http.StatusBadRequest, "limits[0]"},
		{"bad project", http.MethodPut, h.adminKey, map[string]any{"limits": []any{map[string]any{"project": "acme", "requests_per_minute": 5}}}, http.StatusBadRequest, `limits[0].project: \"acme\" is not entity/project`},
		{"budget without amount", http.MethodPut, h.adminKey, map[string]any{"budgets": []any{map[string]any{"project": "acme/app"}}}, http.StatusBadRequest, "budgets[0]: set usd_per_day"},
		{"not JSON", http.MethodPut, h.adminKey, "{", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := map[string]string{"Authorization": "Bearer " + tc.key}
			status, out := call(a, tc.method, tc.body, headers)
			if tc.status == 0 && status/100 == 4 || status == tc.status {
				if !strings.Contains(string(out), tc.want) {
					t.Fatalf("%d %s, want it to name %q", status, out, tc.want)
				}
				return
			}
			t.Fatalf("%d %s, want %d", status, out, tc.status)
		})
	}
	status, out := call(a, http.MethodGet, nil, admin)
	if status != http.StatusOK || field(t, out, "source") != "config" || !strings.Contains(string(out), `"requests_per_minute":100`) {
		t.Fatalf("GET: %d %s", status, out)
	}
	set := map[string]any{"limits": []any{map[string]any{"project": "acme/app", "requests_per_minute": 1}},
		"budgets": []any{map[string]any{"project": "acme/app", "usd_per_day": 25, "name": "daily"}}}
	status, out = call(a, http.MethodPut, set, admin)
	if status != http.StatusOK || field(t, out, "source") != "store" || field(t, out, "updated_by") == nil {
		t.Fatalf("PUT: %d %s", status, out)
	}
	project := map[string]string{"Service-Project": "acme/app"}
	for _, r := range []*harness{a, a} {
		r.chat(msg("echo-model", "hi", nil), project)
	}
	if status, _, out := a.chat(msg("echo-model", "hi", nil), project); status != http.StatusTooManyRequests {
		t.Fatalf("the replica that took the change: %d %s", status, out)
	}
	syncAll(t, b)
	if status, out := call(b, http.MethodGet, nil, admin); status != http.StatusOK || field(t, out, "source") != "store" ||
		!strings.Contains(string(out), `"usd_per_day":25`) {
		t.Fatalf("the other replica after its sync: %d %s", status, out)
	}
	restarted := h.replica(store, "a2", nil)
	syncAll(t, restarted)
	if _, out := call(restarted, http.MethodGet, nil, admin); field(t, out, "source") != "store" {
		t.Fatalf("after a restart: %s", out)
	}
	if status, out := call(b, http.MethodDelete, nil, admin); status != http.StatusOK || field(t, out, "source") != "config" {
		t.Fatalf("DELETE: %d %s", status, out)
	}
	syncAll(t, a)
	if _, out := call(a, http.MethodGet, nil, admin); field(t, out, "source") != "config" || !strings.Contains(string(out), `"requests_per_minute":100`) {
		t.Fatalf("after a reset, the other replica: %s", out)
	}
}
