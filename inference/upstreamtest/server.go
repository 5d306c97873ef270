// Package upstreamtest is an OpenAI-compatible chat completion server for
// tests and benchmarks of the gateway: deterministic answers, streamed or
// not, with tool calls, JSON mode, reasoning and usage, and failures chosen
// by the model name (see Server). It records what it received, so tests
// can check what the gateway forwarded.
//
// Production code must never import it.
package upstreamtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Options shape a server.
type Options struct {
	// Key is the Bearer key the server demands; "" accepts any request.
	Key string
	// Delay is how long "slow" models wait before answering.
	Delay time.Duration
	// HoldInterval spaces the chunks of "hold" streams. 1s when zero.
	HoldInterval time.Duration
	// Record keeps every request for Requests (off for benchmarks).
	Record bool
}

// Request is one request as received.
type Request struct {
	Header http.Header
	Body   map[string]json.RawMessage
}

// Server answers POST .../chat/completions. The upstream model name picks
// the behaviour:
//
//	echo*, anything else  "echo: " + the last user message (JSON with
//	                      response_format, a tool call when tools are given)
//	reasoner*             the same with reasoning text
//	*judge*               a judge's verdict, {"verdict": whether the last
//	                      user message says "good", "reason": ...}
//	                      (slow-judge is a slow one)
//	judge-garbled         a judge's answer that is not JSON
//	fail-NNN              status NNN with an OpenAI error body
//	slow*                 waits Delay first
//	midstream-error       streams two chunks, then an error event
//	cut                   streams two chunks, then ends without [DONE]
//	hold                  streams a chunk every HoldInterval until the
//	                      client goes away (counted by Canceled)
//	silent                answers headers, then nothing until cancelled
type Server struct {
	*httptest.Server
	opts     Options
	mu       sync.Mutex
	requests []Request
	served   atomic.Int64
	canceled atomic.Int64
	open     atomic.Int64
}

// New starts a server on a loopback port; Close stops it.
func New(opts Options) *Server {
	if opts.HoldInterval == 0 {
		opts.HoldInterval = time.Second
	}
	s := &Server{opts: opts}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the URL to configure as a provider's base_url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns what was received so far (with Options.Record).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Served counts chat requests answered, successfully or not.
func (s *Server) Served() int64 { return s.served.Load() }

// Canceled counts streams that ended because the client went away.
func (s *Server) Canceled() int64 { return s.canceled.Load() }

// Open counts streams being served now.
func (s *Server) Open() int64 { return s.open.Load() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path, "invalid_request_error", "")
		return
	}
	s.served.Add(1)
	if s.opts.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.Key {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided", "invalid_request_error", "")
		return
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "body is not a JSON object: "+err.Error(), "invalid_request_error", "")
		return
	}
	if s.opts.Record {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
	}
	req, err := parseRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "messages")
		return
	}
	s.answer(w, r, req)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *request) {
	if status, ok := failStatus(req.model); ok {
		typ := "server_error"
		if status < 500 {
			typ = "invalid_request_error"
		}
		writeError(w, status, "upstream failure "+req.model, typ, "")
		return
	}
	if strings.HasPrefix(req.model, "slow") {
		select {
		case <-time.After(s.opts.Delay):
		case <-r.Context().Done():
			s.canceled.Add(1)
			return
		}
	}
	if !req.stream {
		if req.model == "silent" {
			<-r.Context().Done()
			s.canceled.Add(1)
			return
		}
		writeJSON(w, http.StatusOK, req.completion())
		return
	}
	s.open.Add(1)
	defer s.open.Add(-1)
	s.stream(w, r, req)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg, typ, param string) {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// DeadURL is a base URL nothing listens on: a provider that refuses
// every connection.
func DeadURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/v1"
}
