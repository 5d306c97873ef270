package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// serveLimited runs h behind NewServer and ConnLimits.Listen.
func serveLimited(t *testing.T, l ConnLimits, h http.Handler) string {
	t.Helper()
	ln, err := l.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(h, l, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// echo answers 200 with the body's length.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprint(w, len(b))
})

// roundTrip sends one keep-alive request on c and reads the answer.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader) *http.Response {
	t.Helper()
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// closedWithin reports whether the server closes c within d.
func closedWithin(c net.Conn, br *bufio.Reader, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := br.ReadByte()
	return errors.Is(err, io.EOF)
}

func TestIdleKeepAliveConnectionIsClosed(t *testing.T) {
	addr := serveLimited(t, ConnLimits{IdleTimeout: 200 * time.Millisecond}, echo)
	c, br := dial(t, addr)
	roundTrip(t, c, br)
	if !closedWithin(c, br, 10*time.Second) {
		t.Fatal("idle keep-alive connection still open long after the idle limit")
	}
}

func TestDribbledBodyIsCutOff(t *testing.T) {
	addr := serveLimited(t, ConnLimits{ReadTimeout: 300 * time.Millisecond}, echo)
	c, br := dial(t, addr)
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// A byte every 20ms would take 20s; the server must give up long before.
	go func() {
		for i := 0; i < 1000; i++ {
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the dribbled body was read to its end")
		}
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("no answer and no close while the body dribbled")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cut off only after %v", d)
	}
}

func TestConnectionCapHolds(t *testing.T) {
	addr := serveLimited(t, ConnLimits{MaxConns: 2}, echo)
	c1, br1 := dial(t, addr)
	roundTrip(t, c1, br1)
	c2, br2 := dial(t, addr)
	roundTrip(t, c2, br2)
	// The third connection waits in the accept queue: no answer yet.
	c3, br3 := dial(t, addr)
	if _, err := io.WriteString(c3, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	_ = c3.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br3.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third connection served beyond the cap of 2 (read: %v)", err)
	}
	c1.Close()
	_ = c3.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br3, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after a slot freed: %v, %v", resp, err)
	}
	resp.Body.Close()
}

// A handler working past the read limit, its body read, keeps its
// context: net/http would cancel it when the read deadline passed.
func TestSlowHandlerIsNotCancelledByTheReadLimit(t *testing.T) {
	addr := serveLimited(t, ConnLimits{ReadTimeout: 100 * time.Millisecond}, http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			select {
			case <-r.Context().Done():
				http.Error(w, "cancelled", http.StatusServiceUnavailable)
			case <-time.After(400 * time.Millisecond):
				fmt.Fprint(w, "done")
			}
		}))
	c, br := dial(t, addr)
	if resp := roundTrip(t, c, br); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
}

// A streaming answer that keeps making progress outlives the write limit.
func TestStreamingOutlivesTheWriteLimit(t *testing.T) {
	// 1.8s in all against a 1s limit, with 700ms to spare per step.
	addr := serveLimited(t, ConnLimits{WriteTimeout: time.Second}, http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			p := NewProgress(w, r)
			for i := 0; i < 6; i++ {
				p.Wrote()
				fmt.Fprintf(w, "line %d\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(300 * time.Millisecond)
			}
		}))
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || strings.Count(string(body), "\n") != 6 {
		t.Fatalf("stream cut: %q, %v", body, err)
	}
}

// progressReader calls Progress.Read as an upload handler's reader does.
type progressReader struct {
	r io.Reader
	p *Progress
}

func (pr progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	if n > 0 {
		pr.p.Read()
	}
	return n, err
}

// An upload whose content keeps arriving outlives the read limit.
func TestSteadyUploadOutlivesTheReadLimit(t *testing.T) {
	addr := serveLimited(t, ConnLimits{ReadTimeout: time.Second}, http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(progressReader{r.Body, NewProgress(w, r)})
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, len(b))
		}))
	c, br := dial(t, addr)
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	for range 6 { // 1.8s in all against a 1s limit, a byte every 300ms
		time.Sleep(300 * time.Millisecond)
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatalf("upload cut off: %v", err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("upload answered %v, %v; want 200", resp, err)
	}
	resp.Body.Close()
}
