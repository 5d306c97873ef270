package app

import (
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/weftdev/weft/internal/telemetry"
)

// A handler that breaks its answer off after the 200 (a stream whose read
// failed) is counted per route, and the client still sees the break.
func TestAbortedAnswersAreCountedPerRoute(t *testing.T) {
	m := telemetry.New()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /calls/stream_query", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{\"id\":\"c1\"}\n"))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	srv := httptest.NewUnstartedServer(recoverPanics(slog.New(slog.DiscardHandler), m.HTTPAbortedResponses, mux))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	defer srv.Close()
	for range 2 {
		resp, err := http.Post(srv.URL+"/calls/stream_query", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatal("the aborted answer ended cleanly")
		}
	}
	var got dto.Metric
	if err := m.HTTPAbortedResponses.WithLabelValues("POST /calls/stream_query").Write(&got); err != nil {
		t.Fatal(err)
	}
	if got := got.GetCounter().GetValue(); got != 2 {
		t.Fatalf("weft_http_aborted_responses{route=\"POST /calls/stream_query\"} = %v, want 2", got)
	}
}
