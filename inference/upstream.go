package inference

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/inference/catalog"
)

// upstreamClient sends requests to providers.
type upstreamClient struct {
	http        *http.Client
	timeout     time.Duration
	idle        time.Duration
	maxResponse int64
}

func newUpstreamClient(cfg Config, rt http.RoundTripper) *upstreamClient {
	if rt == nil {
		rt = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: cfg.ConnectTimeout,
			// Streams hold a connection each; without enough idle ones
			// kept, every request under load would dial anew.
			MaxIdleConns: 4096, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second,
			// Streams must arrive as sent, not through a gzip reader.
			DisableCompression: true, ForceAttemptHTTP2: true,
		}
	}
	return &upstreamClient{timeout: cfg.Timeout, idle: cfg.StreamIdleTimeout, maxResponse: cfg.MaxResponseBytes,
		http: &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// answer is an upstream's answer the gateway accepted: a whole body, or a
// stream whose first byte has arrived.
type answer struct {
	upstream catalog.Upstream
	status   int
	body     []byte
	stream   *bufio.Reader
	closer   io.Closer
	cancel   context.CancelFunc
	idle     *idleTimer
	// busy is the upstream whose requests in flight count the answer
	// until it is closed; nil once closed.
	busy *upstreamState
}

func (a *answer) close() {
	if a.busy != nil {
		a.busy.leave()
		a.busy = nil
	}
	if a.closer != nil {
		_ = a.closer.Close()
	}
	if a.idle != nil {
		a.idle.stop()
	}
	a.cancel()
}

// failure is why one attempt did not give an answer.
type failure struct {
	status  int // 0: no HTTP answer
	message string
	// retryAfter is the upstream's Retry-After; 0 when it sent none.
	retryAfter time.Duration
}

func (f *failure) Error() string {
	if f.status == 0 {
		return f.message
	}
	return fmt.Sprintf("answered %d: %s", f.status, f.message)
}

// passesThrough lists the statuses relayed to the client as they are:
// answers and refusals of the request itself, which another upstream
// would refuse too. Every other status moves to the next upstream.
func passesThrough(status int) bool {
	return status/100 == 2 || status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge ||
		status == http.StatusUnprocessableEntity
}

// Upstream paths, below a provider's base URL.
const (
	chatPath   = "/chat/completions"
	imagesPath = "/images/generations"
)

// try makes one attempt on one upstream, at path.
func (c *upstreamClient) try(ctx context.Context, up catalog.Upstream, path string, body []byte, stream bool) (*answer, *failure) {
	timeout := c.timeout
	if up.Provider.Timeout > 0 {
		timeout = up.Provider.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	var idle *idleTimer
	if stream {
		// A stream's silence is bounded from the start, headers included.
		idle = newIdleTimer(c.idle, cancel)
	}
	resp, err := c.http.Do(newUpstreamRequest(actx, up, path, body, stream))
	if err != nil {
		idle.stop()
		cancel()
		return nil, &failure{message: c.describe(actx, idle, err, timeout)}
	}
	ans := &answer{upstream: up, status: resp.StatusCode, cancel: cancel, idle: idle}
	if !passesThrough(resp.StatusCode) {
		msg := errorMessage(resp.Body)
		_ = resp.Body.Close()
		ans.close()
		return nil, &failure{status: resp.StatusCode, message: msg, retryAfter: upstreamRetryAfter(resp.Header, time.Now())}
	}
	if stream && resp.StatusCode == http.StatusOK {
		return c.openStream(actx, ans, resp, timeout)
	}
	defer resp.Body.Close()
	if ans.body, err = readBounded(resp.Body, c.maxResponse); err != nil {
		ans.close()
		return nil, &failure{message: "reading the answer: " + c.describe(actx, idle, err, timeout)}
	}
	idle.stop()
	return ans, nil
}

func newUpstreamRequest(ctx context.Context, up catalog.Upstream, path string, body []byte, stream bool) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.Provider.BaseURL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "weft-inference")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if key := up.Provider.APIKey(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}

// openStream waits for the stream's first byte (at most the idle
// timeout): a stream that fails before it has sent anything is a failed
// attempt, and the next upstream may still serve the request.
func (c *upstreamClient) openStream(ctx context.Context, ans *answer, resp *http.Response, timeout time.Duration) (*answer, *failure) {
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		_ = resp.Body.Close()
		ans.close()
		return nil, &failure{message: fmt.Sprintf("asked to stream, answered Content-Type %q instead of text/event-stream", ct)}
	}
	// Small: the transport buffers the connection already, and a stream
	// holds this buffer for as long as it lasts.
	br := bufio.NewReaderSize(resp.Body, 2<<10)
	if _, err := br.Peek(1); err != nil {
		_ = resp.Body.Close()
		ans.close()
		return nil, &failure{message: "the stream ended before its first byte: " + c.describe(ctx, ans.idle, err, timeout)}
	}
	ans.stream, ans.closer = br, resp.Body
	return ans, nil
}

// describe words a transport error, naming the setting behind a timeout.
func (c *upstreamClient) describe(ctx context.Context, idle *idleTimer, err error, timeout time.Duration) string {
	if idle.hasFired() {
		return fmt.Sprintf("sent nothing for inference.stream_idle_timeout (%s)", c.idle)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within the timeout (%s; inference.timeout or the provider's timeout)", timeout)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "connecting timed out (inference.connect_timeout): " + err.Error()
	}
	return err.Error()
}

// errorMessage reads an error answer's message, briefly.
func errorMessage(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if jsonErr := json.Unmarshal(b, &e); jsonErr == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return strings.TrimSpace(string(b))
}

// errTooLarge marks an answer over inference.max_response_bytes.
var errTooLarge = errors.New("the answer is larger than inference.max_response_bytes")

func readBounded(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, err
}

// idleTimer cancels an attempt when its stream stays silent too long.
type idleTimer struct {
	d     time.Duration
	t     *time.Timer
	fired atomic.Bool
}

func newIdleTimer(d time.Duration, cancel context.CancelFunc) *idleTimer {
	it := &idleTimer{d: d}
	it.t = time.AfterFunc(d, func() { it.fired.Store(true); cancel() })
	return it
}

// The methods accept a nil timer: unstreamed answers have none.
func (it *idleTimer) reset() {
	if it != nil {
		it.t.Reset(it.d)
	}
}

func (it *idleTimer) stop() {
	if it != nil {
		it.t.Stop()
	}
}

func (it *idleTimer) hasFired() bool { return it != nil && it.fired.Load() }
