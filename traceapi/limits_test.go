package traceapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/traceapi"
)

// recordingStore answers every read empty and records that it was asked.
type recordingStore struct {
	storage.FeedbackStore
	storage.CostStore
	asked []string
}

func (s *recordingStore) QueryCalls(context.Context, storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	s.asked = append(s.asked, "QueryCalls")
	return func(func(storage.StoredCall, error) bool) {}
}

func (s *recordingStore) CountCalls(context.Context, storage.CallsQuery, int64) (storage.CallsStats, error) {
	s.asked = append(s.asked, "CountCalls")
	return storage.CallsStats{}, nil
}

func (s *recordingStore) AggregateCalls(context.Context, storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	s.asked = append(s.asked, "AggregateCalls")
	return storage.CallsAggregate{}, nil
}

func (s *recordingStore) QueryThreads(context.Context, storage.ThreadsQuery) iter.Seq2[storage.Thread, error] {
	s.asked = append(s.asked, "QueryThreads")
	return func(func(storage.Thread, error) bool) {}
}

func (s *recordingStore) QueryFeedback(context.Context, storage.FeedbackQuery) (storage.FeedbackQueryRes, error) {
	s.asked = append(s.asked, "QueryFeedback")
	return storage.FeedbackQueryRes{}, nil
}

func (s *recordingStore) PurgeFeedback(context.Context, string, []string) error {
	s.asked = append(s.asked, "PurgeFeedback")
	return nil
}

func (s *recordingStore) QueryPrices(context.Context, storage.CostQuery) (storage.CostQueryRes, error) {
	s.asked = append(s.asked, "QueryPrices")
	return storage.CostQueryRes{}, nil
}

func (s *recordingStore) PurgePrices(context.Context, string, []string) error {
	s.asked = append(s.asked, "PurgePrices")
	return nil
}

// limitsMux serves every endpoint that takes a query or sort keys over
// store, with opts.
func limitsMux(t testing.TB, store *recordingStore, opts ...traceapi.Option) *http.ServeMux {
	t.Helper()
	mux := http.NewServeMux()
	caller := auth.Principal{KeyID: "k", UserID: "u", Entity: "acme", Role: auth.RoleMember}
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), caller)))
		})
	}
	logger := slog.New(slog.DiscardHandler)
	const maxBody = 8 << 20
	traceapi.New(store, traceapi.CallExtras{}, maxBody, logger, opts...).Register(mux, wrap)
	traceapi.NewThreadsAPI(store, maxBody, logger, opts...).Register(mux, wrap)
	traceapi.NewAggregateAPI(store, traceapi.CallExtras{}, maxBody, logger, opts...).Register(mux, wrap)
	traceapi.NewCostsAPI(store, maxBody, logger, opts...).Register(mux, wrap)
	fb, err := traceapi.NewFeedbackAPI(store, maxBody, logger, opts...)
	if err != nil {
		t.Fatal(err)
	}
	fb.Register(mux, wrap)
	return mux
}

// post answers body at path: the status and the error's reason, if any.
func post(mux *http.ServeMux, path, body string) (int, string) {
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	var res struct{ Reason string }
	_ = json.Unmarshal(rec.Body.Bytes(), &res)
	return rec.Code, res.Reason
}

const eqTerm = `{"$eq":[{"$getField":"inputs.model"},{"$literal":"m3"}]}`

func terms(term string, n int) string { return strings.TrimSuffix(strings.Repeat(term+",", n), ",") }

func literals(n int) string { return terms(`{"$literal":"c"}`, n) }

// callsBody is a /calls/stream_query body with a query and sort keys.
func callsBody(query string, sortFields ...string) string {
	sortBy := make([]map[string]string, len(sortFields))
	for i, f := range sortFields {
		sortBy[i] = map[string]string{"field": f, "direction": "desc"}
	}
	sb, _ := json.Marshal(sortBy)
	if query == "" {
		query = "null"
	}
	return `{"project_id":"acme/app","query":` + query + `,"sort_by":` + string(sb) + `}`
}

// sortKeys are n sort_by fields on JSON paths.
func sortKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("inputs.k%d", i)
	}
	return out
}

// TestQueryLimits sends /calls/stream_query each hostile shape at its
// default limit, which is answered, and one past it, which is a 400
// naming where, the limit and the setting that raises it, answered
// without asking storage.
func TestQueryLimits(t *testing.T) {
	d := querylang.DefaultLimits()
	expr := func(op string) string { return `{"$expr":` + op + `}` }
	cases := []struct {
		name    string
		body    func(n int) string
		limit   int
		loc     string
		setting string
	}{
		{"query bytes", func(n int) string {
			doc := expr(eqTerm)
			return callsBody(`{"$expr":` + strings.Repeat(" ", n-len(doc)) + eqTerm + `}`)
		}, d.MaxQueryBytes, "query has 262145 bytes", "queries.max_query_bytes"},
		{"$and operands", func(n int) string {
			return callsBody(expr(`{"$and":[` + terms(eqTerm, n) + `]}`))
		}, d.MaxOperands, "query.$expr.$and has 101 operands", "queries.max_operands"},
		{"$or operands", func(n int) string {
			return callsBody(expr(`{"$not":[{"$or":[` + terms(eqTerm, n) + `]}]}`))
		}, d.MaxOperands, "query.$expr.$not[0].$or has 101 operands", "queries.max_operands"},
		{"$in list", func(n int) string {
			return callsBody(expr(`{"$in":[{"$getField":"id"},[` + literals(n) + `]]}`))
		}, d.MaxInList, "query.$expr.$in[1] has 1001 elements", "queries.max_in_list"},
		{"nodes", func(n int) string { // $or of two $in lists: 5 nodes besides the lists
			first := (n - 5) / 2
			in := func(k int) string { return `{"$in":[{"$getField":"id"},[` + literals(k) + `]]}` }
			return callsBody(expr(`{"$or":[` + in(first) + `,` + in(n-5-first) + `]}`))
		}, d.MaxNodes, "query has more than 2000 nodes (operations, fields and literals)", "queries.max_nodes"},
		{"literal string bytes", func(n int) string {
			return callsBody(expr(`{"$contains":{"input":{"$getField":"inputs.q"},"substr":{"$literal":"` + strings.Repeat("x", n) + `"}}}`))
		}, d.MaxStringBytes, "query.$expr.$contains.substr.$literal has 65537 bytes", "queries.max_string_bytes"},
		{"field path bytes", func(n int) string {
			return callsBody(expr(`{"$eq":[{"$getField":"` + strings.Repeat("f", n) + `"},{"$literal":1}]}`))
		}, d.MaxStringBytes, "query.$expr.$eq[0].$getField has 65537 bytes", "queries.max_string_bytes"},
		{"field path segments", func(n int) string {
			return callsBody(expr(`{"$eq":[{"$getField":"inputs` + strings.Repeat(".a", n-1) + `"},{"$literal":1}]}`))
		}, d.MaxPathSegments, "query.$expr.$eq[0].$getField has 65 path segments", "queries.max_path_segments"},
		{"sort keys", func(n int) string { return callsBody("", sortKeys(n)...) },
			d.MaxSortKeys, "sort_by has 11 keys", "queries.max_sort_keys"},
		{"sort field segments", func(n int) string {
			return callsBody("", "started_at", "inputs"+strings.Repeat(".a", n-1))
		}, d.MaxPathSegments, "sort_by[1].field has 65 path segments", "queries.max_path_segments"},
		{"sort field bytes", func(n int) string { return callsBody("", strings.Repeat("f", n)) },
			d.MaxStringBytes, "sort_by[0].field has 65537 bytes", "queries.max_string_bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &recordingStore{}
			mux := limitsMux(t, store)
			if code, reason := post(mux, "/calls/stream_query", tc.body(tc.limit)); code != http.StatusOK {
				t.Fatalf("at the limit (%d): status %d, %q; want 200", tc.limit, code, reason)
			}
			if len(store.asked) != 1 {
				t.Fatalf("at the limit, storage was asked %v", store.asked)
			}
			store.asked = nil
			code, reason := post(mux, "/calls/stream_query", tc.body(tc.limit+1))
			if code != http.StatusBadRequest {
				t.Fatalf("one past the limit: status %d, %q; want 400", code, reason)
			}
			want := fmt.Sprintf("at most %d are allowed (%s)", tc.limit, tc.setting)
			if !strings.HasPrefix(reason, tc.loc) || !strings.HasSuffix(reason, want) {
				t.Errorf("reason %q; want %q ... %q", reason, tc.loc, want)
			}
			if len(store.asked) != 0 {
				t.Errorf("storage was asked %v for a query over a limit", store.asked)
			}
		})
	}
}

// TestQueryLimitsIssueShapes sends the shapes that took the store seconds
// to minutes: each is a 400 naming a limit, storage untouched.
func TestQueryLimitsIssueShapes(t *testing.T) {
	in := func(n int) string {
		return `{"$expr":{"$in":[{"$getField":"inputs.model"},[` + literals(n) + `]]}}`
	}
	cases := []struct{ name, body, setting string }{
		{"8,000 identical $and terms", callsBody(`{"$expr":{"$and":[` + terms(eqTerm, 8000) + `]}}`), "queries.max_query_bytes"},
		{"$in of 100,000 literals", callsBody(in(100_000)), "queries.max_query_bytes"},
		{"$in of 4,000 literals", callsBody(in(4000)), "queries.max_nodes"},
		{"a 1 MiB literal", callsBody(`{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":"` + strings.Repeat("x", 1<<20) + `"}]}}`), "queries.max_query_bytes"},
		{"200 sort keys on JSON paths", callsBody("", sortKeys(200)...), "queries.max_sort_keys"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &recordingStore{}
			code, reason := post(limitsMux(t, store), "/calls/stream_query", tc.body)
			if code != http.StatusBadRequest || !strings.HasSuffix(reason, "("+tc.setting+")") {
				t.Fatalf("status %d, %q; want 400 naming %s", code, reason, tc.setting)
			}
			if len(store.asked) != 0 {
				t.Errorf("storage was asked %v", store.asked)
			}
		})
	}
}

// TestQueryLimitsConfigured: limits passed to the constructors replace
// the defaults; the ones left zero keep theirs.
func TestQueryLimitsConfigured(t *testing.T) {
	store := &recordingStore{}
	mux := limitsMux(t, store, traceapi.WithQueryLimits(querylang.Limits{MaxOperands: 2, MaxSortKeys: 1}))
	and := func(n int) string { return callsBody(`{"$expr":{"$and":[` + terms(eqTerm, n) + `]}}`) }
	cases := []struct {
		name, body, reason string
	}{
		{"2 operands", and(2), ""},
		{"3 operands", and(3), "query.$expr.$and has 3 operands; at most 2 are allowed (queries.max_operands)"},
		{"1 sort key", callsBody("", "started_at"), ""},
		{"2 sort keys", callsBody("", "started_at", "id"), "sort_by has 2 keys; at most 1 are allowed (queries.max_sort_keys)"},
		{"default $in list", callsBody(`{"$expr":{"$in":[{"$getField":"id"},[` + literals(1001) + `]]}}`),
			"query.$expr.$in[1] has 1001 elements; at most 1000 are allowed (queries.max_in_list)"},
	}
	for _, tc := range cases {
		code, reason := post(mux, "/calls/stream_query", tc.body)
		switch {
		case tc.reason == "" && code != http.StatusOK:
			t.Errorf("%s: status %d, %q; want 200", tc.name, code, reason)
		case tc.reason != "" && (code != http.StatusBadRequest || reason != tc.reason):
			t.Errorf("%s: status %d, %q; want 400 %q", tc.name, code, reason, tc.reason)
		}
	}
}

// TestQueryLimitsEveryEndpoint: every endpoint that passes a query or
// sort keys to storage refuses one over a limit with a 400 before storage
// is asked, and answers the same request within the limits.
func TestQueryLimitsEveryEndpoint(t *testing.T) {
	wide := `{"$expr":{"$or":[` + terms(`{"$eq":[{"$getField":"id"},{"$literal":"x"}]}`, 101) + `]}}`
	narrow := `{"$expr":{"$or":[` + terms(`{"$eq":[{"$getField":"id"},{"$literal":"x"}]}`, 100) + `]}}`
	longIn := func(n int) string { return `{"$expr":{"$in":[{"$getField":"id"},[` + literals(n) + `]]}}` }
	sortBy := func(n int) string {
		b, _ := json.Marshal(func() []map[string]string {
			out := []map[string]string{}
			for range n {
				out = append(out, map[string]string{"field": "created_at", "direction": "asc"})
			}
			return out
		}())
		return string(b)
	}
	agg := func(q string) string {
		return `{"project_id":"acme/app","start":"2024-01-01T00:00:00Z","end":"2024-01-01T01:00:00Z","bucket_seconds":3600,"query":` + q + `}`
	}
	cases := []struct {
		path, ok, over, setting string
	}{
		{"/calls/query", callsBody(narrow), callsBody(wide), "queries.max_operands"},
		{"/calls/query", callsBody("", sortKeys(10)...), callsBody("", sortKeys(11)...), "queries.max_sort_keys"},
		{"/calls/query_stats", `{"project_id":"acme/app","query":` + narrow + `}`, `{"project_id":"acme/app","query":` + wide + `}`, "queries.max_operands"},
		{"/calls/aggregate", agg(narrow), agg(wide), "queries.max_operands"},
		{"/threads/stream_query", `{"project_id":"acme/app","sort_by":` + sortBy(10) + `}`, `{"project_id":"acme/app","sort_by":` + sortBy(11) + `}`, "queries.max_sort_keys"},
		{"/feedback/query", `{"project_id":"acme/app","query":` + narrow + `}`, `{"project_id":"acme/app","query":` + wide + `}`, "queries.max_operands"},
		{"/feedback/query", `{"project_id":"acme/app","sort_by":` + sortBy(10) + `}`, `{"project_id":"acme/app","sort_by":` + sortBy(11) + `}`, "queries.max_sort_keys"},
		{"/cost/query", `{"project_id":"acme/app","query":` + longIn(1000) + `}`, `{"project_id":"acme/app","query":` + longIn(1001) + `}`, "queries.max_in_list"},
		{"/feedback/purge", `{"project_id":"acme/app","query":` + narrow + `}`, `{"project_id":"acme/app","query":` + wide + `}`, "queries.max_operands"},
		{"/cost/purge", `{"project_id":"acme/app","query":` + longIn(1000) + `}`, `{"project_id":"acme/app","query":` + longIn(1001) + `}`, "queries.max_in_list"},
	}
	for _, tc := range cases {
		t.Run(tc.path+" "+tc.setting, func(t *testing.T) {
			store := &recordingStore{}
			mux := limitsMux(t, store)
			if code, reason := post(mux, tc.path, tc.ok); code != http.StatusOK || len(store.asked) == 0 {
				t.Fatalf("within the limits: status %d, %q, storage asked %v; want 200 from storage", code, reason, store.asked)
			}
			store.asked = nil
			code, reason := post(mux, tc.path, tc.over)
			if code != http.StatusBadRequest || !strings.HasSuffix(reason, "("+tc.setting+")") {
				t.Fatalf("over a limit: status %d, %q; want 400 naming %s", code, reason, tc.setting)
			}
			if len(store.asked) != 0 {
				t.Errorf("storage was asked %v", store.asked)
			}
		})
	}
}

// BenchmarkQueryLimitsRefusal times /calls/stream_query refusing the
// issue's shapes end to end: reading the body, decoding the request and
// checking the query. The store took seconds to minutes to run them.
func BenchmarkQueryLimitsRefusal(b *testing.B) {
	in := func(n int) string {
		return `{"$expr":{"$in":[{"$getField":"inputs.model"},[` + literals(n) + `]]}}`
	}
	cases := []struct{ name, body string }{
		{"and 8000 terms (456 KB)", callsBody(`{"$expr":{"$and":[` + terms(eqTerm, 8000) + `]}}`)},
		{"and 1000 terms (57 KB)", callsBody(`{"$expr":{"$and":[` + terms(eqTerm, 1000) + `]}}`)},
		{"in 100000 literals (1.6 MB)", callsBody(in(100_000))},
		{"in 4000 literals (64 KB)", callsBody(in(4000))},
		{"in 1001 literals", callsBody(in(1001))},
		{"1 MiB literal", callsBody(`{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":"` + strings.Repeat("x", 1<<20) + `"}]}}`)},
		{"200 sort keys", callsBody("", sortKeys(200)...)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			store := &recordingStore{}
			mux := limitsMux(b, store)
			b.SetBytes(int64(len(tc.body)))
			b.ReportAllocs()
			for b.Loop() {
				if code, reason := post(mux, "/calls/stream_query", tc.body); code != http.StatusBadRequest {
					b.Fatalf("status %d, %q", code, reason)
				}
			}
			if len(store.asked) != 0 {
				b.Fatalf("storage was asked %v", store.asked)
			}
		})
	}
}
