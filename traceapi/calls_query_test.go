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
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/traceapi"
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
			traceapi.New(reader, traceapi.CallExtras{}, 1<<20, slog.New(slog.DiscardHandler)).Register(mux, wrap)
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

// failingReader yields n calls, then fails.
type failingReader struct{ n int }

func (f failingReader) QueryCalls(context.Context, storage.CallsQuery) iter.Seq2[storage.StoredCall, error] {
	return func(yield func(storage.StoredCall, error) bool) {
		for i := range f.n {
			c := storage.StoredCall{Call: storage.Call{ProjectID: "acme/app", ID: fmt.Sprintf("c%d", i), TraceID: "t", OpName: "op",
				StartedAt: time.Unix(0, 0).UTC(), Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`)}}
			if !yield(c, nil) {
				return
			}
		}
		yield(storage.StoredCall{}, errors.New("the store failed part way"))
	}
}

func (failingReader) CountCalls(context.Context, storage.CallsQuery, int64) (storage.CallsStats, error) {
	return storage.CallsStats{}, nil
}

// TestStreamFailingPartWayIsCutShort serves stream_query over a real
// connection from a reader that fails after thousands of calls: the 200
// and those lines are already sent, so the only way to tell the client is
// to break the response. The client must see an error reading the body,
// never an answer that ends cleanly as if it were complete.
func TestStreamFailingPartWayIsCutShort(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) {
			mux := http.NewServeMux()
			caller := auth.Principal{KeyID: "k", UserID: "u", Entity: "acme", Role: auth.RoleMember}
			wrap := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), caller)))
				})
			}
			traceapi.New(failingReader{n: 3000}, traceapi.CallExtras{}, 1<<20, slog.New(slog.DiscardHandler)).Register(mux, wrap)
			srv := httptest.NewUnstartedServer(mux)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the abort is expected
			if proto == "HTTP/2.0" {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			resp, err := srv.Client().Post(srv.URL+"/calls/stream_query", "application/json", strings.NewReader(`{"project_id":"acme/app"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Proto != proto {
				t.Fatalf("status %d over %s; want a 200 stream over %s", resp.StatusCode, resp.Proto, proto)
			}
			body, err := io.ReadAll(resp.Body)
			if err == nil {
				t.Fatalf("the body ended cleanly after %d bytes; a failed stream must end in an error the client sees", len(body))
			}
			if !strings.Contains(string(body), `"id":"c1"`) {
				t.Errorf("the lines sent before the failure are missing: %d bytes", len(body))
			}
		})
	}
}
