package inference

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
)

// gatedUpstream is the harness's upstream behind a gate: each request
// announces itself on arrived and waits until open is closed.
type gatedUpstream struct {
	*httptest.Server
	arrived chan struct{}
	open    chan struct{}
	next    atomic.Pointer[http.Handler]
}

func newGatedUpstream(t *testing.T) *gatedUpstream {
	g := &gatedUpstream{arrived: make(chan struct{}, 64), open: make(chan struct{})}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.arrived <- struct{}{}
		<-g.open
		(*g.next.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// newGatedHarness is a harness with the model "gated", served by the
// harness's upstream behind g, and chat requests of up to 1 MiB.
func newGatedHarness(t *testing.T, g *gatedUpstream) *harness {
	h := newHarness(t, func(c *Config) {
		c.MaxRequestBytes = 1 << 20
		c.Providers = append(c.Providers, catalog.ProviderConfig{Name: "gated", BaseURL: g.URL + "/v1", APIKeyEnv: "UP_KEY"})
		c.Models = append(c.Models, model("gated", "", on("gated", "echo")))
	})
	next := h.up.Config.Handler
	g.next.Store(&next)
	return h
}

// chunked posts body to path without a declared length.
func (h *harness) chunked(path, key string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	req, _ := http.NewRequest(http.MethodPost, h.url+path, io.MultiReader(strings.NewReader(string(body))))
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

// TestGatewayBodyCountedUntilTheUpstreamAnswered: a chunked request body
// is counted in the budget as it is read, stays counted while the
// upstream has not answered and until its call is traced, and is given
// back after.
func TestGatewayBodyCountedUntilTheUpstreamAnswered(t *testing.T) {
	long := strings.Repeat("x", 300<<10)
	for _, tc := range []struct {
		path string
		body any
	}{
		{"/v1/chat/completions", msg("gated", long, nil)},
		{"/completions/create", map[string]any{"project_id": "acme/budget", "inputs": msg("gated", long, nil)}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			g := newGatedUpstream(t)
			h := newGatedHarness(t, g)
			raw, _ := json.Marshal(tc.body)
			var heldAtTrace atomic.Int64
			h.calls.mu.Lock()
			h.calls.onRecord = func(storage.Call) { heldAtTrace.Store(h.inflight.Held()) }
			h.calls.mu.Unlock()

			done := make(chan int, 1)
			go func() {
				status, _, out := h.chunked(tc.path, h.key, raw, nil)
				if status != http.StatusOK {
					t.Errorf("answered %d: %s", status, out)
				}
				done <- status
			}()
			<-g.arrived
			for range 3 { // while the upstream thinks, the body stays counted
				if got := h.inflight.Held(); got != int64(len(raw)) {
					t.Fatalf("while the upstream has not answered the budget holds %d bytes, want the body's %d", got, len(raw))
				}
				time.Sleep(20 * time.Millisecond)
			}
			close(g.open)
			<-done
			waitFor(t, func() bool { return h.inflight.Held() == 0 }, "the body's bytes given back")
			if got := heldAtTrace.Load(); got != int64(len(raw)) {
				t.Fatalf("when the call was traced the budget held %d bytes, want the body's %d", got, len(raw))
			}
		})
	}
}

// TestGatewayBudgetBoundsConcurrentLargeRequests: many large chunked
// requests at once from several keys: the budget never holds more than
// its bound, no key more than its share, the requests that do not fit are
// answered 429 in the OpenAI shape with Retry-After, and the others hold
// their bytes until the upstream answers.
func TestGatewayBudgetBoundsConcurrentLargeRequests(t *testing.T) {
	const n, budget, share = 12, 1 << 20, 512 << 10
	g := newGatedUpstream(t)
	h := newGatedHarness(t, g)
	h.inflight.SetPolicy(httpapi.BodyPolicy{PerKey: share})
	keys := []string{h.key, h.newKey(h.keys, "acme", auth.RoleMember), h.newKey(h.keys, "acme", auth.RoleMember)}
	raw, _ := json.Marshal(msg("gated", strings.Repeat("y", 200<<10), nil))

	stop := make(chan struct{})
	var most atomic.Int64
	go func() {
		for {
			most.Store(max(most.Load(), h.inflight.Held()))
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var refused, answered atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, header, out := h.chunked("/v1/chat/completions", keys[i%len(keys)], raw, nil)
			switch {
			case status == http.StatusTooManyRequests:
				if header.Get("Retry-After") == "" || !strings.Contains(string(out), "rate_limit_exceeded") || !strings.Contains(string(out), "connections.max_inflight_bytes") {
					t.Errorf("refused without Retry-After or the OpenAI shape naming the setting: %s", out)
				}
				refused.Add(1)
			case status == http.StatusOK:
				answered.Add(1)
			default:
				t.Errorf("answered %d: %s", status, out)
			}
		}()
	}
	arrived := 0
	waitFor(t, func() bool {
		for {
			select {
			case <-g.arrived:
				arrived++
				continue
			default:
			}
			return arrived+int(refused.Load()) == n
		}
	}, "every request at the upstream or refused")
	if arrived == 0 || int64(arrived)*int64(len(raw)) > budget {
		t.Fatalf("%d requests of %d bytes reached the upstream at once; the budget is %d", arrived, len(raw), budget)
	}
	if held := h.inflight.Held(); held != int64(arrived)*int64(len(raw)) {
		t.Fatalf("with %d requests at the upstream the budget holds %d bytes, want %d", arrived, held, arrived*len(raw))
	}
	close(g.open)
	wg.Wait()
	close(stop)
	if got := most.Load(); got > budget {
		t.Fatalf("the budget held %d bytes at most, over its %d", got, budget)
	}
	if int(answered.Load()) != arrived {
		t.Fatalf("%d answered, %d had reached the upstream", answered.Load(), arrived)
	}
	waitFor(t, func() bool { return h.inflight.Held() == 0 }, "every body's bytes given back")
}

// TestKeyConcurrencyCapAcrossProjects: one key naming more projects does
// not get more requests in flight than its own cap; another key is not
// limited by it.
func TestKeyConcurrencyCapAcrossProjects(t *testing.T) {
	for _, tc := range []struct {
		name              string
		perKey, projects  int
		perProject, admit int
	}{
		{"five projects, two per key", 2, 5, 256, 2},
		{"three projects, four per key", 4, 3, 256, 4},
		{"one project capped below the key", 4, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) {
				c.MaxConcurrentPerKey, c.MaxConcurrentPerProject = tc.perKey, tc.perProject
				c.StreamIdleTimeout = time.Minute // a busy machine must not end a held stream
			})
			var holds []*http.Response
			defer func() {
				for _, r := range holds {
					r.Body.Close()
				}
			}()
			admitted := 0
			for i := range tc.projects + 2 { // two more requests than projects, spread over them
				project := map[string]string{"Service-Project": "acme/p" + string(rune('0'+i%tc.projects))}
				resp := h.do(http.MethodPost, "/v1/chat/completions", msg("hold", "hi", map[string]any{"stream": true}), project)
				if resp.StatusCode == http.StatusOK {
					holds = append(holds, resp)
					admitted++
					continue
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
					t.Fatalf("request %d: %d Retry-After %q: %s", i, resp.StatusCode, resp.Header.Get("Retry-After"), out)
				}
				want := "inference.max_concurrent_per_key"
				if admitted < tc.perKey {
					want = "inference.max_concurrent_per_project"
				}
				if !strings.Contains(string(out), want) {
					t.Fatalf("request %d refused without naming %s: %s", i, want, out)
				}
			}
			if admitted != tc.admit {
				t.Fatalf("the key has %d requests in flight, want %d", admitted, tc.admit)
			}
			other := h.newKey(h.keys, "acme", auth.RoleMember)
			status, _, out := h.chat(msg("echo-model", "hi", nil), map[string]string{"Authorization": "Bearer " + other, "Service-Project": "acme/elsewhere"})
			if status != http.StatusOK {
				t.Fatalf("another key was limited too: %d %s", status, out)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
