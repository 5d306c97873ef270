package httpapi

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// ConnLimits bound what one client connection may hold: without them an
// idle keep-alive connection, or a body sent a byte a minute, keeps a file
// handle for good.
type ConnLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included. File
	// uploads extend it while their content keeps arriving.
	ReadTimeout time.Duration
	// WriteTimeout bounds handling a request and writing its answer.
	// Streaming answers extend it while they make progress, so it bounds
	// a stall rather than the stream.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout time.Duration
	// MaxConns caps the open connections of a listener; more wait in the
	// kernel's accept queue. 0: no cap.
	MaxConns int
}

// NewServer returns a server that applies l to every connection and
// passes l to handlers (see Progress). The read limit ends with the body:
// net/http lifts it once the body has been read, so it never cancels a
// handler still working.
func NewServer(h http.Handler, l ConnLimits, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), limitsKey{}, l)))
		}),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          errorLog,
	}
}

// Listen binds addr with at most l.MaxConns connections open at once.
func (l ConnLimits) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return l.Limit(ln), nil
}

// Limit caps ln at l.MaxConns open connections.
func (l ConnLimits) Limit(ln net.Listener) net.Listener {
	if l.MaxConns <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, l.MaxConns)
}

type limitsKey struct{}

// Progress extends a long request's deadlines as it makes progress:
// streaming answers call Wrote, uploads Read. Under a server without
// limits (tests) it does nothing.
type Progress struct {
	rc   *http.ResponseController
	l    ConnLimits
	last time.Time
}

// NewProgress returns the Progress of one request.
func NewProgress(w http.ResponseWriter, r *http.Request) *Progress {
	l, _ := r.Context().Value(limitsKey{}).(ConnLimits)
	return &Progress{rc: http.NewResponseController(w), l: l}
}

// Wrote pushes the write deadline WriteTimeout past now. A stream's
// request body has been read, so its read deadline is already lifted.
func (p *Progress) Wrote() {
	if p.l.WriteTimeout > 0 && p.due() {
		_ = p.rc.SetWriteDeadline(time.Now().Add(p.l.WriteTimeout))
	}
}

// Read pushes the read deadline ReadTimeout past now.
func (p *Progress) Read() {
	if p.l.ReadTimeout > 0 && p.due() {
		_ = p.rc.SetReadDeadline(time.Now().Add(p.l.ReadTimeout))
	}
}

// due limits deadline changes to a few per second: each one is a system
// call on the connection.
func (p *Progress) due() bool {
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return false
	}
	p.last = now
	return true
}
