package httpapi

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const kib = 1 << 10

var quiet = slog.New(slog.DiscardHandler)

// budgetServer serves h behind f.Limit on a real listener with limits l.
func budgetServer(t *testing.T, f *Inflight, l ConnLimits, h http.Handler, streamed ...string) string {
	t.Helper()
	return "http://" + serveLimited(t, l, f.Limit(h, streamed...))
}

// gatedHandler reads the body with ReadBody, then waits at the gate
// until it opens: the request holds its bytes meanwhile.
type gatedHandler struct {
	entered chan string
	open    chan struct{}
}

func newGated() *gatedHandler {
	return &gatedHandler{entered: make(chan string, 64), open: make(chan struct{})}
}

func (g *gatedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := ReadBody(r, 64<<20)
	if err != nil {
		WriteError(w, r, quiet, err)
		return
	}
	g.entered <- r.URL.Path
	<-g.open
	fmt.Fprint(w, len(body))
}

type answer struct {
	status     int
	retryAfter string
	body       map[string]any
	err        error
}

func post(url, key string, body []byte, header ...string) answer {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

// waitHeld waits until f holds want bytes.
func waitHeld(t *testing.T, f *Inflight, want int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.Held() != want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the budget holds %d bytes, want %d", f.Held(), want)
		}
	}
}

// TestInflightShares walks the rule step by step: requests that pass hold
// their bytes at the gate until the end; the others are refused, naming
// the limit and the setting.
func TestInflightShares(t *testing.T) {
	f := NewInflight(1024 * kib)
	f.SetPolicy(BodyPolicy{PerKey: 256 * kib})
	gate := newGated()
	url := budgetServer(t, f, ConnLimits{}, gate, "/file/")
	compressed := gzipped(randomBytes(60 * kib)) // counted four times: about 240 KiB

	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(gate.open)
	var held int64
	for _, step := range []struct {
		name, path, key string
		body            []byte
		header          []string
		counted         int64  // bytes it holds when it passes
		limit           string // "": it passes and waits at the gate
	}{
		{"a key within its share", "/call", "A", randomBytes(200 * kib), nil, 200 * kib, ""},
		{"the same key past its share", "/call", "A", randomBytes(100 * kib), nil, 0, "inflight_bytes_per_key"},
		{"another key beside it", "/call", "B", randomBytes(200 * kib), nil, 200 * kib, ""},
		{"a compressed body counts four times", "/call", "C", compressed, []string{"Content-Encoding", "gzip"}, 4 * int64(len(compressed)), ""},
		{"...and fills its key's share", "/call", "C", randomBytes(20 * kib), nil, 0, "inflight_bytes_per_key"},
		{"requests without a key share one share", "/call", "", randomBytes(200 * kib), nil, 200 * kib, ""},
		{"a fresh key past the whole budget", "/call", "D", randomBytes(200 * kib), nil, 0, "inflight_bytes"},
		{"a streamed upload is not counted", "/file/create", "D", randomBytes(2048 * kib), nil, 0, ""},
	} {
		if step.limit != "" {
			a := post(url+step.path, step.key, step.body, step.header...)
			if a.status != http.StatusTooManyRequests || a.retryAfter == "" || a.body["limit"] != step.limit ||
				!strings.Contains(fmt.Sprint(a.body["reason"]), fmt.Sprint(a.body["setting"])) {
				t.Fatalf("%s: %d Retry-After %q %v; want 429 with Retry-After naming %s and its setting", step.name, a.status, a.retryAfter, a.body, step.limit)
			}
			waitHeld(t, f, held) // a refused request keeps nothing
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a := post(url+step.path, step.key, step.body, step.header...); a.status != http.StatusOK {
				t.Errorf("%s: answered %d %v after the gate opened", step.name, a.status, a.body)
			}
		}()
		<-gate.entered
		held += step.counted
		waitHeld(t, f, held)
	}
}

// TestOneBodyLargerThanAShareCountsAsTheShare: a body over its key's
// share passes once it alone holds the share, and is counted as the share.
func TestOneBodyLargerThanAShareCountsAsTheShare(t *testing.T) {
	f := NewInflight(1024 * kib)
	f.SetPolicy(BodyPolicy{PerKey: 256 * kib})
	gate := newGated()
	url := budgetServer(t, f, ConnLimits{}, gate)
	done := make(chan answer, 1)
	go func() { done <- post(url, "A", randomBytes(600*kib)) }()
	<-gate.entered
	waitHeld(t, f, 256*kib)
	close(gate.open)
	if a := <-done; a.status != http.StatusOK {
		t.Fatalf("a body over the share alone = %d %v", a.status, a.body)
	}
	waitHeld(t, f, 0)
}

// TestLimitAnswersWhateverTheHandlerAnswers: a handler that reads the body
// its own way and answers a read error as 400 (as OTLP's does), or answers
// nothing, still gets the limit's 429 out to the client.
func TestLimitAnswersWhateverTheHandlerAnswers(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"ReadBody and WriteError": func(w http.ResponseWriter, r *http.Request) {
			if _, err := ReadBody(r, 64<<20); err != nil {
				WriteError(w, r, quiet, err)
			}
		},
		"its own read, 400 on error": func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				w.Header().Set("Content-Type", "application/x-protobuf")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte{0x0a, 0x01, 'x'})
			}
		},
		"nothing written": func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) },
	} {
		t.Run(name, func(t *testing.T) {
			f := NewInflight(1024 * kib)
			f.SetPolicy(BodyPolicy{PerKey: 256 * kib})
			gate := newGated()
			mux := http.NewServeMux()
			mux.Handle("/hold", gate)
			mux.Handle("/", h)
			url := budgetServer(t, f, ConnLimits{}, mux)
			done := make(chan answer, 1)
			go func() { done <- post(url+"/hold", "A", randomBytes(150*kib)) }()
			<-gate.entered
			// Room to start (64 KiB), not to finish: stopped while reading.
			a := post(url+"/other", "A", randomBytes(150*kib))
			close(gate.open)
			if a.status != http.StatusTooManyRequests || a.retryAfter == "" || a.body["limit"] != "inflight_bytes_per_key" ||
				a.body["setting"] != "connections.max_inflight_bytes_per_key" {
				t.Errorf("stopped mid-body: %d Retry-After %q %v", a.status, a.retryAfter, a.body)
			}
			if a := <-done; a.status != http.StatusOK {
				t.Errorf("the holder: %d", a.status)
			}
			waitHeld(t, f, 0)
		})
	}
}

// slowSender opens a connection and sends a POST declaring length bytes
// (chunked when length is negative) with key; the body follows by hand.
type slowSender struct {
	c  net.Conn
	br *bufio.Reader
}

func startSlow(t *testing.T, url, key string, length int64, header ...string) *slowSender {
	t.Helper()
	s, err := dialSlow(url, key, length, header...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.c.Close() })
	return s
}

func dialSlow(url, key string, length int64, header ...string) (*slowSender, error) {
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		return nil, err
	}
	var h strings.Builder
	fmt.Fprintf(&h, "POST /call HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n", key)
	if length >= 0 {
		fmt.Fprintf(&h, "Content-Length: %d\r\n", length)
	} else {
		h.WriteString("Transfer-Encoding: chunked\r\n")
	}
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&h, "%s: %s\r\n", header[i], header[i+1])
	}
	h.WriteString("\r\n")
	if _, err := io.WriteString(c, h.String()); err != nil {
		c.Close()
		return nil, err
	}
	return &slowSender{c: c, br: bufio.NewReader(c)}, nil
}

// send writes n body bytes; false once the server stopped taking them.
func (s *slowSender) send(n int) bool {
	_, err := s.c.Write(bytes.Repeat([]byte("x"), n))
	return err == nil
}

// answer reads the server's answer, waiting at most d.
func (s *slowSender) answer(d time.Duration) answer {
	_ = s.c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(s.br, nil)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// TestDeclaredLengthIsNotReserved: a body declaring 16 MiB and sent
// slowly holds what has arrived, never what it declared.
func TestDeclaredLengthIsNotReserved(t *testing.T) {
	for _, tc := range []struct {
		name   string
		length int64
		header []string
		factor int64
	}{
		{"declared 16 MiB", 16 << 20, nil, 1},
		{"chunked", -1, nil, 1},
		{"declared 16 MiB, compressed", 16 << 20, []string{"Content-Encoding", "gzip"}, encodedExpansion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewInflight(16 << 20)
			f.SetPolicy(BodyPolicy{PerKey: 16 << 20})
			url := budgetServer(t, f, ConnLimits{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
			}))
			s := startSlow(t, url, "A", tc.length, tc.header...)
			sent := 0
			for _, n := range []int{10000, 5000, 1} {
				if tc.length < 0 {
					fmt.Fprintf(s.c, "%x\r\n", n)
				}
				s.send(n)
				if tc.length < 0 {
					io.WriteString(s.c, "\r\n")
				}
				sent += n
				waitHeld(t, f, int64(sent)*tc.factor)
				time.Sleep(20 * time.Millisecond)
				if got := f.Held(); got != int64(sent)*tc.factor {
					t.Fatalf("after %d bytes sent the budget holds %d", sent, got)
				}
			}
			s.c.Close()
			waitHeld(t, f, 0)
		})
	}
}

// TestSlowBodyIsCutOff: once the grace has passed a body must keep to
// the minimum rate on average, else 408 naming the setting; the read
// timeout still bounds the whole body.
func TestSlowBodyIsCutOff(t *testing.T) {
	const rate, grace = 32 * kib, 300 * time.Millisecond
	for _, tc := range []struct {
		name        string
		readTimeout time.Duration
		first       int           // sent at once
		chunk       int           // then sent every interval
		interval    time.Duration //
		total       int
		status      int
		limit       string
		within      time.Duration // answered this long after the start at most
	}{
		{"steady above the rate", 0, 0, 4 * kib, 50 * time.Millisecond, 64 * kib, http.StatusOK, "", 3 * time.Second},
		{"a trickle below the rate", 0, 0, 256, 50 * time.Millisecond, 16 << 20, http.StatusRequestTimeout, "min_body_rate", 2 * time.Second},
		{"a fast start, then silence", 0, 32 * kib, 0, time.Hour, 16 << 20, http.StatusRequestTimeout, "min_body_rate", grace + time.Second + 2*time.Second},
		{"ahead of the rate past the read timeout", time.Second, 256 * kib, 0, time.Hour, 16 << 20, http.StatusRequestTimeout, "read_timeout", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewInflight(16 << 20)
			f.SetPolicy(BodyPolicy{PerKey: 16 << 20, MinRate: rate, Grace: grace})
			url := budgetServer(t, f, ConnLimits{ReadTimeout: tc.readTimeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := ReadBody(r, 64<<20); err != nil {
					WriteError(w, r, quiet, err)
				}
			}))
			start := time.Now()
			s := startSlow(t, url, "A", int64(tc.total))
			answered := make(chan answer, 1)
			go func() { answered <- s.answer(10 * time.Second) }()
			s.send(tc.first)
			sent := tc.first
			tick := time.NewTicker(tc.interval)
			defer tick.Stop()
			var a answer
		loop:
			for sent < tc.total {
				select {
				case a = <-answered:
					break loop
				case <-tick.C:
					n := min(tc.chunk, tc.total-sent)
					if !s.send(n) {
						a = <-answered
						break loop
					}
					sent += n
				}
			}
			if a.status == 0 && a.err == nil {
				a = <-answered
			}
			took := time.Since(start)
			if a.status != tc.status || (tc.limit != "" && (a.body["limit"] != tc.limit || !strings.Contains(fmt.Sprint(a.body["reason"]), "connections."+tc.limit))) {
				t.Fatalf("%d %v (%v) after %s; want %d naming %q", a.status, a.body, a.err, took, tc.status, tc.limit)
			}
			if took > tc.within {
				t.Fatalf("answered after %s, want within %s", took, tc.within)
			}
			waitHeld(t, f, 0)
		})
	}
}

// TestSlowSenderCannotStarveOtherKeys is the attack: one valid key opens
// several bodies declaring 16 MiB and sends them slowly, again and
// again. Another key's requests all pass, each quickly; the slow key
// holds no more than its share, and its bodies are cut off with 408.
func TestSlowSenderCannotStarveOtherKeys(t *testing.T) {
	f := NewInflight(1024 * kib)
	f.SetPolicy(BodyPolicy{PerKey: 256 * kib, MinRate: 32 * kib, Grace: 500 * time.Millisecond})
	url := budgetServer(t, f, ConnLimits{ReadTimeout: time.Minute}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := ReadBody(r, 64<<20)
		if err != nil {
			WriteError(w, r, quiet, err)
			return
		}
		fmt.Fprint(w, len(body))
	}))

	stop := make(chan struct{})
	var attackers sync.WaitGroup
	var mu sync.Mutex
	refused := map[int]int{} // the attacker's answers by status
	for range 4 {
		attackers.Add(1)
		go func() {
			defer attackers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, err := dialSlow(url, "attacker", 16<<20)
				if err != nil {
					t.Error(err)
					return
				}
				answered := make(chan answer, 1)
				go func() { answered <- s.answer(10 * time.Second) }()
				s.send(64 * kib)
				tick := time.NewTicker(100 * time.Millisecond)
			drip:
				for {
					select {
					case a := <-answered:
						mu.Lock()
						refused[a.status]++
						mu.Unlock()
						break drip
					case <-stop:
						break drip
					case <-tick.C:
						s.send(100)
					}
				}
				tick.Stop()
				s.c.Close()
			}
		}()
	}
	// The slow key's own bytes, sampled throughout: never past its share.
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		attacker := keyOf(&http.Request{Header: http.Header{"Authorization": {"Bearer attacker"}}})
		for {
			f.mu.Lock()
			held := f.byKey[attacker]
			f.mu.Unlock()
			if held > 256*kib {
				t.Errorf("the slow key holds %d bytes, more than its share", held)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	deadline := time.Now().Add(4 * time.Second)
	var worst time.Duration
	for n := 0; time.Now().Before(deadline); n++ {
		var wg sync.WaitGroup
		for v := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				a := post(url+"/call", fmt.Sprint("victim-", v), randomBytes(200*kib))
				took := time.Since(start)
				mu.Lock()
				worst = max(worst, took)
				mu.Unlock()
				if a.status != http.StatusOK {
					t.Errorf("the other key's request %d: %d %v %v", n, a.status, a.body, a.err)
				}
			}()
		}
		wg.Wait()
	}
	close(stop)
	attackers.Wait()
	sampling.Wait()
	if worst > time.Second {
		t.Errorf("the other key's slowest request took %s", worst)
	}
	mu.Lock()
	defer mu.Unlock()
	if refused[http.StatusRequestTimeout] == 0 || refused[http.StatusOK] != 0 {
		t.Errorf("the slow key's bodies were answered %v; want them cut off with 408 (429 when its share is spent)", refused)
	}
	waitHeld(t, f, 0)
}

// TestHoldCountsUntilReleased: Hold counts as the body is read and keeps
// the bytes until release; a request already counted is not counted twice.
func TestHoldCountsUntilReleased(t *testing.T) {
	f := NewInflight(1024 * kib)
	released := make(chan struct{})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, release := f.Hold(w, r)
		_, _ = io.Copy(io.Discard, r.Body)
		if got := f.Held(); got != 100*kib {
			t.Errorf("while held after reading: %d", got)
		}
		release()
		close(released)
	})
	url := "http://" + serveLimited(t, ConnLimits{}, inner)
	if a := post(url, "A", randomBytes(100*kib)); a.status != http.StatusOK {
		t.Fatal(a.status)
	}
	<-released
	waitHeld(t, f, 0)

	twice := "http://" + serveLimited(t, ConnLimits{}, f.Limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, release := f.Hold(w, r)
		defer release()
		_, _ = io.Copy(io.Discard, r.Body)
		if got := f.Held(); got != 100*kib {
			t.Errorf("under Limit and Hold: %d, want the body counted once", got)
		}
	})))
	if a := post(twice, "A", randomBytes(100*kib)); a.status != http.StatusOK {
		t.Fatal(a.status)
	}
	waitHeld(t, f, 0)
}
