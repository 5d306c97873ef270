package traceapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/traceapi"
)

// pacedStore is a calls, aggregate and threads reader whose reads take as
// long as the request says, and end as DuckDB's do when their context
// ends: with the context's error joined to the store's own.
//
// A call id says how: "block" holds the read until release is closed,
// "slow" until its context ends, "oom" fails as a store out of memory;
// any other id answers at once. A stream_query of a project named
// "acme/paced" yields lines calls with gap of store time before each.
type pacedStore struct {
	started chan string // the id of every read that reached the store
	release chan struct{}
	lines   int
	gap     time.Duration
}

func newPacedStore() *pacedStore {
	return &pacedStore{started: make(chan string, 100), release: make(chan struct{})}
}

// interrupted is what a DuckDB statement interrupted by its context
// returns.
func interrupted(ctx context.Context) error {
	return fmt.Errorf("query calls: %w", errors.Join(ctx.Err(), errors.New("INTERRUPT Error: Interrupted!")))
}

func (s *pacedStore) read(ctx context.Context, id string) error {
	s.started <- id
	switch id {
	case "block":
		select {
		case <-s.release:
		case <-ctx.Done():
			return interrupted(ctx)
		}
	case "slow":
		<-ctx.Done()
		return interrupted(ctx)
	case "oom":
		return errors.New("query calls: Out of Memory Error: failed to allocate data of size 16.0 MiB (384.0 MiB/384.0 MiB used)")
	}
	return nil
}

func pacedCall(i int) storage.StoredCall {
	return storage.StoredCall{Call: storage.Call{ProjectID: "acme/app", ID: fmt.Sprintf("c%d", i), TraceID: "t", OpName: "op",
		StartedAt: time.Unix(0, 0).UTC(), Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`)}}
}

func (s *pacedStore) QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	return func(yield func(storage.StoredCall, error) bool) {
		if q.ProjectID == "acme/paced" {
			for i := range s.lines {
				select {
				case <-time.After(s.gap):
				case <-ctx.Done():
					yield(storage.StoredCall{}, interrupted(ctx))
					return
				}
				if !yield(pacedCall(i), nil) {
					return
				}
			}
			return
		}
		id := ""
		if len(q.Filter.CallIDs) > 0 {
			id = q.Filter.CallIDs[0]
		}
		if err := s.read(ctx, id); err != nil {
			yield(storage.StoredCall{}, err)
			return
		}
		yield(pacedCall(0), nil)
	}
}

func (s *pacedStore) CountCalls(ctx context.Context, q storage.CallsQuery, _ int64) (storage.CallsStats, error) {
	return storage.CallsStats{Count: 1}, s.read(ctx, q.Filter.CallIDs[0])
}

func (s *pacedStore) AggregateCalls(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	return storage.CallsAggregate{}, s.read(ctx, q.Calls.Filter.CallIDs[0])
}

func (s *pacedStore) QueryThreads(ctx context.Context, q storage.ThreadsQuery) iter.Seq2[storage.Thread, error] {
	return func(yield func(storage.Thread, error) bool) {
		if err := s.read(ctx, q.ThreadIDs[0]); err != nil {
			yield(storage.Thread{}, err)
		}
	}
}

// pacedReader is what pacedServer serves.
type pacedReader interface {
	traceapi.CallReader
	storage.CallsAggregator
	storage.ThreadReader
}

// pacedServer serves the calls, aggregate and threads APIs over store
// with budget; X-Test-Key names the caller's key (any name is a key of
// entity acme). APIs given equal budgets share a gate: each test's
// differs (MaxConcurrent) so that it has one of its own.
func pacedServer(t *testing.T, store pacedReader, budget traceapi.Budget) *httptest.Server {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := auth.Principal{KeyID: r.Header.Get("X-Test-Key"), UserID: "u", Entity: "acme", Role: auth.RoleViewer}
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), p)))
		})
	}
	opt := traceapi.WithQueryLimits(traceapi.Settings{Budget: budget})
	gate := traceapi.WithReadGate(traceapi.NewReadGate(budget)) // as the server shares one
	traceapi.New(store, traceapi.CallExtras{}, 1<<20, logger, opt, gate).Register(mux, wrap)
	traceapi.NewAggregateAPI(store, traceapi.CallExtras{}, 1<<20, logger, opt, gate).Register(mux, wrap)
	traceapi.NewThreadsAPI(store, 1<<20, logger, opt, gate).Register(mux, wrap)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // aborted streams are expected
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// pacedPost posts body to path as key.
func pacedPost(srv *httptest.Server, key, path, body string) answer {
	return postAs(srv, auth.Principal{KeyID: key}, path, body)
}

// pacedBodies are requests of each budgeted endpoint reading id.
func pacedBodies(id string) map[string]string {
	calls := fmt.Sprintf(`{"project_id":"acme/app","filter":{"call_ids":[%q]}}`, id)
	return map[string]string{
		"/call/read":            fmt.Sprintf(`{"project_id":"acme/app","id":%q}`, id),
		"/calls/query_stats":    calls,
		"/calls/query":          calls,
		"/calls/stream_query":   calls,
		"/threads/stream_query": fmt.Sprintf(`{"project_id":"acme/app","filter":{"thread_ids":[%q]}}`, id),
		"/calls/aggregate":      fmt.Sprintf(`{"project_id":"acme/app","filter":{"call_ids":[%q]},"start":"2024-01-01T00:00:00Z","end":"2024-01-01T01:00:00Z","bucket_seconds":3600}`, id),
	}
}

// TestReadPastMaxDurationIs503 runs a read the store never finishes on
// every budgeted endpoint: each is interrupted at queries.max_duration and
// answered 503 with Retry-After and a reason naming the setting; one the
// store finishes in time is answered 200.
func TestReadPastMaxDurationIs503(t *testing.T) {
	const limit = 100 * time.Millisecond
	store := newPacedStore()
	srv := pacedServer(t, store, traceapi.Budget{MaxDuration: limit, MaxConcurrent: 11})
	want := "the query ran past queries.max_duration (100ms); narrow it with a filter or a time range"
	for path, body := range pacedBodies("slow") {
		t.Run(path, func(t *testing.T) {
			a := pacedPost(srv, "k", path, body)
			if a.status != http.StatusServiceUnavailable || a.reason != want || a.retryAfter == "" || a.setting != "queries.max_duration" {
				t.Fatalf("status %d, reason %q, setting %q, Retry-After %q; want 503 %q naming queries.max_duration, with Retry-After",
					a.status, a.reason, a.setting, a.retryAfter, want)
			}
			if a.took < limit || a.took > limit+2*time.Second {
				t.Errorf("answered after %v; want soon after %v", a.took, limit)
			}
			if ok := pacedPost(srv, "k", path, pacedBodies("fast")[path]); ok.status != http.StatusOK {
				t.Errorf("a read in time: status %d, %q", ok.status, ok.reason)
			}
		})
	}
}

// TestStoreOutOfMemoryIs503 has the store fail as DuckDB does when its
// buffer pool is full: every budgeted endpoint answers 503 with
// Retry-After and a reason saying so, not 500.
func TestStoreOutOfMemoryIs503(t *testing.T) {
	srv := pacedServer(t, newPacedStore(), traceapi.Budget{MaxConcurrent: 12})
	for path, body := range pacedBodies("oom") {
		a := pacedPost(srv, "k", path, body)
		if a.status != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.reason, "ran out of memory") ||
			!strings.Contains(a.reason, "Out of Memory Error") {
			t.Errorf("%s: status %d, reason %q, Retry-After %q; want 503 naming the out-of-memory error, with Retry-After",
				path, a.status, a.reason, a.retryAfter)
		}
	}
}

// TestStreamBudgetIsPerStretchOfStoreWork: a stream's budget bounds each
// stretch of store work between two lines, not the stream: lines that
// each take most of max_duration all arrive, while one stretch past it
// breaks the stream off after the lines already sent.
func TestStreamBudgetIsPerStretchOfStoreWork(t *testing.T) {
	store := newPacedStore()
	srv := pacedServer(t, store, traceapi.Budget{MaxDuration: 300 * time.Millisecond, MaxConcurrent: 13})
	body := `{"project_id":"acme/paced"}`

	store.lines, store.gap = 6, 100*time.Millisecond // 600 ms of store time in all
	a := pacedPost(srv, "k", "/calls/stream_query", body)
	if a.status != http.StatusOK || a.err != nil {
		t.Fatalf("status %d, reason %q, body error %v; want every line of a stream whose pages each fit the budget", a.status, a.reason, a.err)
	}

	store.lines, store.gap = 2, time.Second
	a = pacedPost(srv, "k", "/calls/stream_query", body)
	if a.status != http.StatusServiceUnavailable || !strings.Contains(a.reason, "queries.max_duration") {
		t.Fatalf("first page past the budget: status %d, reason %q; want 503 naming queries.max_duration", a.status, a.reason)
	}
}

// TestStreamPastBudgetMidwayIsBroken: once lines were sent, a stretch of
// store work past the budget aborts the connection, so the client sees an
// error rather than a short answer.
func TestStreamPastBudgetMidwayIsBroken(t *testing.T) {
	srv := pacedServer(t, &midwayStore{pacedStore: newPacedStore()}, traceapi.Budget{MaxDuration: 200 * time.Millisecond, MaxConcurrent: 14})
	a := pacedPost(srv, "k", "/calls/stream_query", `{"project_id":"acme/app"}`)
	if a.status != http.StatusOK || a.err == nil {
		t.Fatalf("status %d, body error %v; want a 200 stream that breaks", a.status, a.err)
	}
}

// midwayStore streams 3,000 calls at once, then works past any budget.
type midwayStore struct{ *pacedStore }

func (s *midwayStore) QueryCalls(ctx context.Context, _ storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	return func(yield func(storage.StoredCall, error) bool) {
		for i := range 3000 {
			if !yield(pacedCall(i), nil) {
				return
			}
		}
		<-ctx.Done()
		yield(storage.StoredCall{}, interrupted(ctx))
	}
}

// TestReadGateShares holds reads in the store to fill a key's share and
// then the whole gate: the key's next read waits, then is a 429 naming
// queries.max_concurrent_per_key, while another key still gets a turn;
// once every turn is taken a third key's read is a 503 naming
// queries.max_concurrent; a read waiting for its key's turn gets it when
// one ends within queries.max_wait.
func TestReadGateShares(t *testing.T) {
	store := newPacedStore()
	const wait = 200 * time.Millisecond
	srv := pacedServer(t, store, traceapi.Budget{MaxDuration: time.Minute, MaxConcurrent: 3, MaxConcurrentPerKey: 2, MaxWait: wait})
	block := pacedBodies("block")["/call/read"]
	fast := pacedBodies("fast")["/call/read"]
	var held sync.WaitGroup
	answers := make(chan answer, 10)
	hold := func(key string) {
		held.Add(1)
		go func() {
			defer held.Done()
			answers <- pacedPost(srv, key, "/call/read", block)
		}()
		if id := <-store.started; id != "block" {
			t.Errorf("the store started %q", id)
		}
	}
	hold("a")
	hold("a")

	steps := []struct {
		name, key, reason string
		status            int
	}{
		{"a key over its share", "a", "this API key already runs 2 queries at once, as many as queries.max_concurrent_per_key allows, " +
			"and none ended within queries.max_wait (200ms); retry when one of them has ended", http.StatusTooManyRequests},
		{"another key", "b", "", http.StatusOK},
	}
	for _, st := range steps {
		a := pacedPost(srv, st.key, "/call/read", fast)
		if a.status != st.status || a.reason != st.reason {
			t.Fatalf("%s: status %d, reason %q; want %d %q", st.name, a.status, a.reason, st.status, st.reason)
		}
		if st.status != http.StatusOK && (a.retryAfter == "" || a.took < wait || a.setting != "queries.max_concurrent_per_key") {
			t.Errorf("%s: Retry-After %q, setting %q after %v; want one, naming queries.max_concurrent_per_key, after waiting %v",
				st.name, a.retryAfter, a.setting, a.took, wait)
		}
		if st.status == http.StatusOK {
			<-store.started
		}
	}

	hold("b") // the gate is full: a, a, b
	a := pacedPost(srv, "c", "/call/read", fast)
	want := "the store already runs 3 queries at once, as many as queries.max_concurrent allows, and none ended within " +
		"queries.max_wait (200ms); retry shortly"
	if a.status != http.StatusServiceUnavailable || a.reason != want || a.retryAfter == "" || a.setting != "queries.max_concurrent" {
		t.Fatalf("a third key with the gate full: status %d, reason %q, setting %q; want 503 %q", a.status, a.reason, a.setting, want)
	}
	// The APIs share the gate: another endpoint's read waits for the same turns.
	if a := pacedPost(srv, "c", "/calls/aggregate", pacedBodies("fast")["/calls/aggregate"]); a.status != http.StatusServiceUnavailable {
		t.Fatalf("an aggregate with the gate full: status %d, %q; want 503: the APIs share one gate", a.status, a.reason)
	}

	// A read that waits gets its turn when one ends within the wait.
	waiting := make(chan answer, 1)
	go func() { waiting <- pacedPost(srv, "a", "/call/read", fast) }()
	time.Sleep(wait / 4)
	close(store.release)
	if a := <-waiting; a.status != http.StatusOK {
		t.Fatalf("a read waiting for its turn: status %d, %q; want 200 once one of its key's ended", a.status, a.reason)
	}
	held.Wait()
	close(answers)
	for a := range answers {
		if a.status != http.StatusOK {
			t.Errorf("a held read: status %d, %q", a.status, a.reason)
		}
	}
}

// TestBudgetValidate names the setting of each budget that cannot work.
func TestBudgetValidate(t *testing.T) {
	cases := []struct {
		b    traceapi.Budget
		want string
	}{
		{traceapi.Budget{}, ""},
		{traceapi.DefaultBudget(), ""},
		{traceapi.Budget{MaxConcurrent: 4, MaxConcurrentPerKey: 4}, ""},
		{traceapi.Budget{MaxDuration: -time.Second}, "queries.max_duration: -1s must not be negative"},
		{traceapi.Budget{MaxWait: -time.Second}, "queries.max_wait: -1s must not be negative"},
		{traceapi.Budget{MaxConcurrent: -1}, "queries.max_concurrent: -1 must not be negative"},
		{traceapi.Budget{MaxConcurrentPerKey: -2}, "queries.max_concurrent_per_key: -2 must not be negative"},
		{traceapi.Budget{MaxConcurrent: 4, MaxConcurrentPerKey: 5}, "queries.max_concurrent_per_key: 5 is more than queries.max_concurrent (4)"},
		{traceapi.Budget{MaxConcurrentPerKey: 9}, "queries.max_concurrent_per_key: 9 is more than queries.max_concurrent (8)"},
	}
	for _, tc := range cases {
		err := tc.b.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v; want it valid", tc.b, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v; want an error containing %q", tc.b, err, tc.want)
		}
	}
}
