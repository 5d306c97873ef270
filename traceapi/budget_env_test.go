package traceapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage/duckdb"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/traceapi"
)

// The tenants of the budget tests: one sends expensive queries to its
// big project, the other reads single calls of its own.
const (
	hostileProject = "acme/big"
	victimProject  = "other/app"
	victimCalls    = 1000
)

var (
	hostileKey = auth.Principal{KeyID: "k-hostile", UserID: "u-hostile", Entity: "acme", Role: auth.RoleViewer}
	victimKey  = auth.Principal{KeyID: "k-victim", UserID: "u-victim", Entity: "other", Role: auth.RoleViewer}
)

// seedBudgetStore opens a store in a temporary directory holding n calls
// in hostileProject, with ~300-byte inputs carrying a prompt, a model
// and ten numeric keys k0..k9, and victimCalls calls in victimProject.
// The rows are written by SQL (a fraction of the write path's time for
// the same calls), then the store is opened again so that its id filter
// and locator know them, as after a restart.
func seedBudgetStore(t testing.TB, n int) *duckdb.Store {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	s, err := duckdb.Open(ctx, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 10) // numbers, distinct per key, so that sorting on all ten is work
	for k := range keys {
		keys[k] = fmt.Sprintf(`',"k%d":' || ((i * %d) %% 997)`, k, 7919+k*104729)
	}
	const insert = `INSERT INTO calls (project_id, id, has_start, has_end, trace_id, op_name, started_at, ended_at,
		attributes, inputs, output, summary, wb_user_id)
	SELECT $1, printf('%%08x-%%s', i, $2), true, true, printf('%%032x', i // 10), 'op-' || (i %% 20),
		TIMESTAMP '2024-01-01' + to_seconds(i), TIMESTAMP '2024-01-01' + to_seconds(i) + INTERVAL 150 MILLISECOND,
		'{}', '{"prompt":"' || repeat('lorem ipsum dolor ', 12) || i || '","model":"m' || (i %% 50) || '"' || %s || '}',
		'{"text":"answer ' || i || '"}', '{}', 'u'
	FROM range(%d) t(i)`
	for _, p := range []struct {
		project string
		n       int
	}{{hostileProject, n}, {victimProject, victimCalls}} {
		q := fmt.Sprintf(insert, strings.Join(keys, " || "), p.n)
		if _, err := s.DB().ExecContext(ctx, q, p.project, strings.ReplaceAll(p.project, "/", "-")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = duckdb.Open(ctx, dir, logger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// victimCallID is the id of call i of victimProject.
func victimCallID(i int) string {
	return fmt.Sprintf("%08x-%s", i, strings.ReplaceAll(victimProject, "/", "-"))
}

// budgetServer serves the read APIs over s on a real listener, with
// settings; the caller is the principal named by the X-Test-Key header.
func budgetServer(t testing.TB, s *duckdb.Store, settings traceapi.Settings) *httptest.Server {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	callers := map[string]auth.Principal{hostileKey.KeyID: hostileKey, victimKey.KeyID: victimKey}
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := callers[r.Header.Get("X-Test-Key")]
			if !ok {
				http.Error(w, "no such test key", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), p)))
		})
	}
	opt := traceapi.WithQueryLimits(settings)
	traceapi.New(s, traceapi.CallExtras{Feedback: s, Prices: s, Refs: s}, 1<<20, logger, opt).Register(mux, wrap)
	traceapi.NewAggregateAPI(s, traceapi.CallExtras{Prices: s}, 1<<20, logger, opt).Register(mux, wrap)
	traceapi.NewThreadsAPI(s, 1<<20, logger, opt).Register(mux, wrap)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // aborted streams are expected
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// answer is one request's outcome.
type answer struct {
	status     int
	reason     string
	setting    string // the setting a refusal names beside its reason
	retryAfter string
	took       time.Duration
	err        error // reading the body failed: a broken stream
}

// postAs posts body to path as key and reads the whole answer.
func postAs(srv *httptest.Server, key auth.Principal, path, body string) answer {
	return postAsContext(context.Background(), srv, key, path, body)
}

// postAsContext is postAs with the request's context: the server sees
// the request end when ctx does.
func postAsContext(ctx context.Context, srv *httptest.Server, key auth.Principal, path, body string) answer {
	begin := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Key", key.KeyID)
	resp, err := srv.Client().Do(req)
	if err != nil {
		return answer{err: err, took: time.Since(begin)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(begin), err: err}
	if resp.StatusCode != http.StatusOK {
		var res struct{ Reason, Setting string }
		_ = json.Unmarshal(raw, &res)
		a.reason, a.setting = res.Reason, res.Setting
	}
	return a
}

// callReadBody reads victim call i.
func callReadBody(i int) string {
	return fmt.Sprintf(`{"project_id":%q,"id":%q}`, victimProject, victimCallID(i))
}

// Hostile-but-allowed queries on hostileProject, each at a default limit
// of querylang: they pass every check before the store and are still
// expensive on a large project.
func hostileQueries() map[string]string {
	d := querylang.DefaultLimits()
	sortBy := func() string {
		keys := make([]string, d.MaxSortKeys)
		for i := range keys {
			keys[i] = fmt.Sprintf(`{"field":"inputs.k%d","direction":"desc"}`, i)
		}
		return "[" + strings.Join(keys, ",") + "]"
	}()
	or := make([]string, d.MaxOperands)
	for i := range or {
		or[i] = fmt.Sprintf(`{"$contains":{"input":{"$getField":"inputs.prompt"},"substr":{"$literal":"zz%d"},"case_insensitive":true}}`, i)
	}
	in := make([]string, d.MaxInList)
	for i := range in {
		in[i] = fmt.Sprintf(`{"$literal":"m%d"}`, i+1000)
	}
	body := func(query string) string {
		return fmt.Sprintf(`{"project_id":%q,"query":%s,"sort_by":%s,"limit":100}`, hostileProject, query, sortBy)
	}
	return map[string]string{
		"wide $or of $contains, 10 JSON sort keys": body(`{"$expr":{"$or":[` + strings.Join(or, ",") + `]}}`),
		"long $in on a JSON path, 10 JSON sort keys": body(`{"$expr":{"$not":[{"$in":[{"$getField":"inputs.model"},[` +
			strings.Join(in, ",") + `]]}]}}`),
		"10 JSON sort keys": body("null"),
	}
}
