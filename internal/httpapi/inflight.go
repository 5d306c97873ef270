package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/auth"
)

// encodedExpansion is how much more a compressed body is counted for: it
// grows when decoded.
const encodedExpansion = 4

// admitBytes is the most room a request needs, when it arrives, for it to
// be let in: its first bytes, not its declared length.
const admitBytes = 64 << 10

// Inflight is a listener's budget of request body bytes held in memory at
// once. Each request's own bound (max_request_bytes) does not add up to a
// total; this does, and shares it between API keys. The rule, whole:
//
//   - A body is counted as it arrives, never as declared: each byte read
//     reserves a byte (four when the body is compressed: it grows when
//     decoded) until the request has been answered. The declared length
//     only bounds what may arrive.
//   - All requests together hold at most the budget
//     (connections.max_inflight_bytes); the requests of one API key at
//     most its share (connections.max_inflight_bytes_per_key, a quarter
//     of the budget unless set). Requests without a key share one share.
//     So one key, however it sends, leaves the rest to the others.
//   - A read that would take a key past its share, or all requests past
//     the budget, stops its request, which is answered 429 with
//     Retry-After; so is a request that arrives while there is no room for
//     its first bytes (its declared length, at most 64 KiB).
//   - No request is counted for more than one share: a body larger than a
//     share (up to max_request_bytes) still passes once it alone holds its
//     key's whole share.
//   - Once connections.body_rate_grace has passed, a body must have
//     arrived at connections.min_body_rate bytes a second on average, or it
//     is cut off with 408: a sender holds its share only while it sends.
//
// Without SetPolicy (the agent, tests) one key may hold the whole budget
// and bodies have no minimum rate.
type Inflight struct {
	max int64

	mu     sync.Mutex
	policy BodyPolicy
	held   int64
	byKey  map[string]int64
}

// BodyPolicy is how the budget is shared and how fast bodies must arrive.
type BodyPolicy struct {
	// PerKey is the most bytes the requests of one API key hold at once;
	// 0: a quarter of the budget.
	PerKey int64
	// MinRate is the average rate, in bytes a second, a body must arrive
	// at once Grace has passed since its first read; 0: none.
	MinRate int64
	// Grace is how long a body may take before MinRate applies.
	Grace time.Duration
}

// NewInflight bounds in-flight body bytes to max.
func NewInflight(max int64) *Inflight {
	return &Inflight{max: max, policy: BodyPolicy{PerKey: max}, byKey: map[string]int64{}}
}

// SetPolicy sets how the budget is shared and how fast bodies must
// arrive, for the requests that start reading from now on.
func (f *Inflight) SetPolicy(p BodyPolicy) {
	if p.PerKey <= 0 {
		p.PerKey = f.max / 4
	}
	p.PerKey = max(min(p.PerKey, f.max), 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.policy = p
}

// Held is the bytes held now, by requests and by Reserve.
func (f *Inflight) Held() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

// LimitError stops a request body at a limit: 429 when the budget or the
// key's share is spent, 408 when the body arrives too slowly. Reads of a
// held body return it; Status and WriteError answer it with the limit and
// the setting named.
type LimitError struct {
	Status int
	// Limit names what was reached: inflight_bytes,
	// inflight_bytes_per_key, min_body_rate or read_timeout.
	Limit string
	// Setting is the configuration key that sets it.
	Setting string
	Msg     string
}

func (e *LimitError) Error() string { return e.Msg }

// write answers e in the Weave shape, with the OpenAI shape's error
// member beside it, so that whichever API the path serves its clients
// read it; the rest of the body is not read.
func (e *LimitError) write(w http.ResponseWriter) {
	h := w.Header()
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	h.Set("Connection", "close")
	typ, code := "requests", "rate_limit_exceeded"
	if e.Status == http.StatusTooManyRequests {
		h.Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	} else {
		typ, code = "invalid_request_error", "request_timeout"
	}
	WriteJSON(w, e.Status, map[string]any{"reason": e.Msg, "limit": e.Limit, "setting": e.Setting,
		"error": map[string]string{"message": e.Msg, "type": typ, "code": code}})
}

func (f *Inflight) budgetSpent() *LimitError {
	return &LimitError{Status: http.StatusTooManyRequests, Limit: "inflight_bytes", Setting: "connections.max_inflight_bytes",
		Msg: fmt.Sprintf("too many request bytes are being read at once: all requests hold %d bytes (connections.max_inflight_bytes); retry later", f.max)}
}

func shareSpent(share int64) *LimitError {
	return &LimitError{Status: http.StatusTooManyRequests, Limit: "inflight_bytes_per_key", Setting: "connections.max_inflight_bytes_per_key",
		Msg: fmt.Sprintf("this API key's requests hold %d bytes of bodies being read, its share of the in-flight budget (connections.max_inflight_bytes_per_key); retry later", share)}
}

// Limit wraps next so every request body is counted as Inflight's rule
// says, from its first read until next returns. A request the rule stops
// is answered 429 (or 408) whatever next answers. Paths starting with
// one of streamed (file uploads, which go to disk as they arrive) are not
// counted, nor are requests a Limit or Hold already counts.
func (f *Inflight) Limit(next http.Handler, streamed ...string) http.Handler {
	if f == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasBody(r) || hasPrefix(r.URL.Path, streamed) || counted(r) {
			next.ServeHTTP(w, r)
			return
		}
		b := f.hold(w, r)
		defer b.release()
		if e := f.admit(b, r.ContentLength); e != nil {
			e.write(w)
			return
		}
		gw := &guardedWriter{ResponseWriter: w, body: b}
		next.ServeHTTP(gw, b.request(r))
		gw.finish()
	})
}

// Hold counts r's body as Inflight's rule says from its first read until
// release is called; pass on the request it returns. Reads past a limit
// fail with a *LimitError. A request a Limit or Hold already counts, and
// any request of a nil Inflight, is returned as it is.
func (f *Inflight) Hold(w http.ResponseWriter, r *http.Request) (_ *http.Request, release func()) {
	if f == nil || !hasBody(r) || counted(r) {
		return r, func() {}
	}
	b := f.hold(w, r)
	return b.request(r), b.release
}

// Reserve takes n bytes (at most the whole bound) for work that is not an
// HTTP request, such as a decoded gRPC message; ok is false when they are
// not free now. A nil Inflight reserves nothing.
func (f *Inflight) Reserve(n int64) (release func(), ok bool) {
	if f == nil {
		return func() {}, true
	}
	n = max(min(n, f.max), 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held+n > f.max {
		return nil, false
	}
	f.held += n
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.held -= n
		})
	}, true
}

func (f *Inflight) hold(w http.ResponseWriter, r *http.Request) *heldBody {
	f.mu.Lock()
	p := f.policy
	f.mu.Unlock()
	b := &heldBody{f: f, body: r.Body, key: keyOf(r), share: p.PerKey, expansion: 1, minRate: p.MinRate, grace: p.Grace}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		b.expansion = encodedExpansion
	}
	if b.minRate > 0 {
		b.rc = http.NewResponseController(w)
		if l, _ := r.Context().Value(limitsKey{}).(ConnLimits); l.ReadTimeout > 0 {
			b.timeout = time.Now().Add(l.ReadTimeout)
		}
	}
	return b
}

// admit checks there is room for a request's first bytes: its declared
// length (or 64 KiB for a body of unknown length), at most 64 KiB.
func (f *Inflight) admit(b *heldBody, declared int64) *LimitError {
	need := int64(admitBytes)
	if declared >= 0 {
		need = min(declared*b.expansion, need)
	}
	need = max(min(need, b.share), 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.byKey[b.key]+need > b.share:
		return shareSpent(b.share)
	case f.held+need > f.max:
		return f.budgetSpent()
	}
	return nil
}

// take counts n more bytes of b.
func (f *Inflight) take(b *heldBody, n int64) *LimitError {
	f.mu.Lock()
	defer f.mu.Unlock()
	room := b.share - b.held
	if b.released || room <= 0 {
		return nil // it alone holds its key's whole share: the rest passes
	}
	n = min(n, room)
	switch {
	case f.byKey[b.key]+n > b.share:
		return shareSpent(b.share)
	case f.held+n > f.max:
		return f.budgetSpent()
	}
	f.byKey[b.key] += n
	f.held += n
	b.held += n
	return nil
}

func (f *Inflight) release(b *heldBody) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b.released {
		return
	}
	b.released = true
	f.held -= b.held
	if f.byKey[b.key] -= b.held; f.byKey[b.key] <= 0 {
		delete(f.byKey, b.key)
	}
	b.held = 0
}

// keyOf is whose share a request's body takes: a digest of its API key
// as sent (an invalid key is refused before its body is read), or "" for
// requests without one.
func keyOf(r *http.Request) string {
	k, ok := auth.KeyFromHeader(r.Header)
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(k))
	return string(sum[:16])
}

type heldKey struct{}

// counted reports whether a Limit or Hold already counts r's body.
func counted(r *http.Request) bool { return r.Context().Value(heldKey{}) != nil }

func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 &&
		r.Method != http.MethodGet && r.Method != http.MethodHead
}

// heldBody is a request body counted as it is read.
type heldBody struct {
	f         *Inflight
	body      io.ReadCloser
	key       string
	share     int64
	expansion int64

	// Pacing (MinRate > 0): the read deadline follows the bytes read.
	rc      *http.ResponseController
	minRate int64
	grace   time.Duration
	timeout time.Time // the request's read timeout, when the server has one

	// Guarded by f.mu.
	held     int64
	released bool

	// The reading goroutine's own.
	start    time.Time
	wire     int64
	deadline time.Time
	eof      bool

	failure atomic.Pointer[LimitError]
}

func (b *heldBody) request(r *http.Request) *http.Request {
	r2 := r.WithContext(context.WithValue(r.Context(), heldKey{}, b))
	r2.Body = b
	return r2
}

func (b *heldBody) release() { b.f.release(b) }

func (b *heldBody) Close() error { return b.body.Close() }

func (b *heldBody) Read(p []byte) (int, error) {
	if e := b.failure.Load(); e != nil {
		return 0, e
	}
	if b.eof {
		return b.body.Read(p)
	}
	b.pace()
	n, err := b.body.Read(p)
	if n > 0 {
		b.wire += int64(n)
		if e := b.f.take(b, int64(n)*b.expansion); e != nil {
			return 0, b.fail(e)
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		b.eof = true
	case err != nil && !b.deadline.IsZero() && isTimeout(err):
		return 0, b.fail(b.tooSlow())
	}
	return n, err
}

func (b *heldBody) fail(e *LimitError) *LimitError {
	b.failure.CompareAndSwap(nil, e)
	return b.failure.Load()
}

// pace sets the read deadline by which the body must have arrived at
// minRate since its first read, after grace; never past the request's
// read timeout. It moves the deadline in steps of a quarter second at
// least (each move costs a timer update), or onto the read timeout.
func (b *heldBody) pace() {
	if b.rc == nil {
		return
	}
	now := time.Now()
	if b.start.IsZero() {
		b.start = now
	}
	credit := time.Duration(b.wire/b.minRate)*time.Second + time.Duration(b.wire%b.minRate*int64(time.Second)/b.minRate)
	d := b.start.Add(b.grace + credit)
	capped := !b.timeout.IsZero() && !d.Before(b.timeout)
	if capped {
		d = b.timeout
	}
	if !b.deadline.IsZero() && (d.Sub(b.deadline) < 250*time.Millisecond && !capped || d.Equal(b.deadline)) {
		return
	}
	if err := b.rc.SetReadDeadline(d); err != nil {
		b.rc = nil // not supported here: the server's read timeout alone applies
		return
	}
	b.deadline = d
}

func (b *heldBody) tooSlow() *LimitError {
	if !b.timeout.IsZero() && !b.deadline.Before(b.timeout) {
		return &LimitError{Status: http.StatusRequestTimeout, Limit: "read_timeout", Setting: "connections.read_timeout",
			Msg: "the request body did not arrive within connections.read_timeout; send it faster or split it"}
	}
	return &LimitError{Status: http.StatusRequestTimeout, Limit: "min_body_rate", Setting: "connections.min_body_rate",
		Msg: fmt.Sprintf("the request body arrived slower than %d bytes a second after its first %s (connections.min_body_rate, connections.body_rate_grace); send it faster",
			b.minRate, b.grace)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// guardedWriter answers a request whose body a limit stopped with the
// limit's answer, unless the handler answers that status itself.
type guardedWriter struct {
	http.ResponseWriter
	body    *heldBody
	decided bool
	refused bool // the handler's answer is dropped for the limit's
}

func (g *guardedWriter) WriteHeader(status int) {
	switch {
	case g.refused:
	case status >= 100 && status < 200 && status != http.StatusSwitchingProtocols:
		g.ResponseWriter.WriteHeader(status)
	case !g.decided:
		g.decided = true
		if e := g.body.failure.Load(); e != nil && e.Status != status {
			g.refused = true
			e.write(g.ResponseWriter)
			return
		}
		g.ResponseWriter.WriteHeader(status)
	default:
		g.ResponseWriter.WriteHeader(status)
	}
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	if g.refused {
		return len(p), nil
	}
	return g.ResponseWriter.Write(p)
}

func (g *guardedWriter) FlushError() error {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	if g.refused {
		return nil
	}
	return http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *guardedWriter) Flush() { _ = g.FlushError() }

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// finish answers the limit's failure for a handler that wrote nothing.
func (g *guardedWriter) finish() {
	if g.decided {
		return
	}
	if e := g.body.failure.Load(); e != nil {
		g.decided, g.refused = true, true
		e.write(g.ResponseWriter)
	}
}

func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
