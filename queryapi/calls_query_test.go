package queryapi_test

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/queryapi"
	"github.com/weftdev/weft/storage"
)

// streamingReader answers every query with one call, then an error, so a
// query that reached it would start a 200 stream before failing.
type streamingReader struct{ queried bool }

func (s *streamingReader) QueryCalls(context.Context, storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	s.queried = true
	return func(yield func(storage.StoredCall, error) bool) {
		c := storage.StoredCall{Call: storage.Call{ProjectID: "acme/app", ID: "c1", TraceID: "t", OpName: "op",
			StartedAt: time.Unix(0, 0).UTC(), Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`)}}
		if yield(c, nil) {
			yield(storage.StoredCall{}, storage.ErrInvalidArgument)
		}
	}
}

func (s *streamingReader) CountCalls(context.Context, storage.CallsQuery, int64) (storage.CallsStats, error) {
	s.queried = true
	return storage.CallsStats{}, nil
}

// TestBadQueryIsRefusedBeforeStreaming posts malformed query documents:
// each is a 400 naming the problem, answered before storage is asked, so
// no JSON line is ever written.
func TestBadQueryIsRefusedBeforeStreaming(t *testing.T) {
	cases := []struct {
		name, path, query, mention string
	}{
		{"unknown operator", "/calls/stream_query", `{"$expr":{"$like":[]}}`, "$like"},
		{"bare literal", "/calls/stream_query", `{"$expr":{"$literal":1}}`, "query.$expr"},
		{"missing operand", "/calls/stream_query", `{"$expr":{"$eq":[{"$getField":"id"}]}}`, "query.$expr.$eq"},
		{"no $expr", "/calls/stream_query", `{"$and":[]}`, "$expr"},
		{"legacy query endpoint", "/calls/query", `{"$expr":{"$like":[]}}`, "$like"},
		{"stats endpoint", "/calls/query_stats", `{"$expr":{"$like":[]}}`, "$like"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reader := &streamingReader{}
			mux := http.NewServeMux()
			caller := auth.Principal{KeyID: "k", UserID: "u", Entity: "acme", Role: auth.RoleMember}
			wrap := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), caller)))
				})
			}
			queryapi.New(reader, queryapi.CallExtras{}, 1<<20, slog.New(slog.DiscardHandler)).Register(mux, wrap)
			body := `{"project_id":"acme/app","query":` + tc.query + `}`
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(body)))
			var res struct{ Reason string }
			if err := json.Unmarshal(rec.Body.Bytes(), &res); rec.Code != http.StatusUnprocessableEntity || err != nil {
				t.Fatalf("status %d, body %q; want a 422 JSON error, as the reference's query schema answers", rec.Code, rec.Body)
			}
			if !strings.Contains(res.Reason, tc.mention) {
				t.Errorf("reason %q does not name %q", res.Reason, tc.mention)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q; want application/json", ct)
			}
			if reader.queried {
				t.Error("storage was asked to run a bad query")
			}
		})
	}
}
