package forwardexporter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

func testConfig(dir, upstream string) Config {
	cfg := DefaultConfig()
	cfg.BufferDir, cfg.Upstream = dir, upstream
	cfg.RetryBackoffMin, cfg.RetryBackoffMax, cfg.MaxRetryAfter = 5*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond
	cfg.MaxBatchOps = 40
	return cfg
}

func startExporter(t *testing.T, cfg Config) *Exporter {
	t.Helper()
	e, err := New(testSettings(t), cfg, NewWeaveSink(cfg.Upstream, &http.Client{Timeout: 5 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

func waitDrained(t *testing.T, e *Exporter) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for e.Backlog() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d records still buffered after 20s", e.Backlog())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// flaky answers the first failures requests with what fail returns, then
// passes requests to next.
func flaky(failures int32, fail func(w http.ResponseWriter, n int32), next http.Handler) http.Handler {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := n.Add(1); i <= failures {
			fail(w, i)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestForwardsInOrderThroughUpstreamFailures: the upstream answers 503,
// 429 (with Retry-After) and 500 for a while; every acknowledged record
// arrives once the upstream recovers, in the order it was acknowledged.
func TestForwardsInOrderThroughUpstreamFailures(t *testing.T) {
	up := newWeaveUpstream(t)
	statuses := []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusInternalServerError}
	up.srv.Config.Handler = flaky(9, func(w http.ResponseWriter, n int32) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(statuses[n%3])
	}, up.srv.Config.Handler)
	e := startExporter(t, testConfig(t.TempDir(), up.srv.URL))
	ctx := WithKey(context.Background(), up.key)
	var want []string
	for b := range 20 {
		ops := completeCalls("acme/order", fmt.Sprintf("b%d", b), 7, 100)
		if _, err := e.ConsumeCalls(ctx, ops); err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			want = append(want, op.Part.Call.ID+"/start", op.Part.Call.ID+"/end")
		}
	}
	waitDrained(t, e)
	var got []string
	for _, op := range up.received() {
		side := "/start"
		if op.Part.Kind == storage.PartEnd {
			side = "/end"
		}
		got = append(got, op.Part.Call.ID+side)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("upstream received %d parts out of order or not once each:\n got %v\nwant %v", len(got), got, want)
	}
}

// TestRestartForwardsTheBacklog: records acknowledged while the upstream
// is away are sent by the next run of the exporter on the same buffer.
func TestRestartForwardsTheBacklog(t *testing.T) {
	dir := t.TempDir()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	first, err := New(testSettings(t), testConfig(dir, down.URL), NewWeaveSink(down.URL, down.Client()))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	up := newWeaveUpstream(t)
	ops := completeCalls("acme/restart", "r", 50, 200)
	if _, err := first.ConsumeCalls(WithKey(context.Background(), up.key), ops); err != nil {
		t.Fatal(err)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(up.received()); n != 0 {
		t.Fatalf("upstream received %d records before it was named", n)
	}
	second := startExporter(t, testConfig(dir, up.srv.URL))
	if second.Backlog() != 1 {
		t.Fatalf("backlog after restart = %d records, want 1", second.Backlog())
	}
	waitDrained(t, second)
	if got := len(up.received()); got != 2*len(ops) {
		t.Fatalf("upstream received %d parts, want %d", got, 2*len(ops))
	}
}

// TestFullBufferAnswersOverloaded: with the upstream away the buffer
// fills to its bound and then refuses records with ErrOverloaded, having
// acknowledged no more than the bound.
func TestFullBufferAnswersOverloaded(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cfg := testConfig(t.TempDir(), down.URL)
	cfg.MaxBufferBytes = minBufferBytes
	e := startExporter(t, cfg)
	ctx := WithKey(context.Background(), "k")
	var accepted int
	for i := 0; ; i++ {
		_, err := e.ConsumeCalls(ctx, randomCalls(i, 64<<10))
		if errors.Is(err, consumer.ErrOverloaded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if accepted++; accepted > 200 {
			t.Fatal("the buffer never filled")
		}
	}
	if !e.Saturated() {
		t.Fatal("a full buffer does not report Saturated")
	}
	if size := dirSize(t, cfg.BufferDir); size > cfg.MaxBufferBytes {
		t.Fatalf("buffer files hold %d bytes, above max_buffer_bytes %d", size, cfg.MaxBufferBytes)
	}
	if accepted < 30 {
		t.Fatalf("only %d records of 64 KiB fitted in 4 MiB", accepted)
	}
}

// TestRefusedRecordsAreSetAside: a record the upstream refuses with a 4xx
// even alone goes to a rejected file and is counted; the records around
// it are delivered.
func TestRefusedRecordsAreSetAside(t *testing.T) {
	up := newWeaveUpstream(t)
	dir := t.TempDir()
	e := startExporter(t, testConfig(dir, up.srv.URL))
	ctx := WithKey(context.Background(), up.key)
	ops := completeCalls("acme/ok", "a", 5, 10)
	// The key's entity is acme: the center answers 403 for another one.
	ops = append(ops, completeCalls("other/no", "x", 1, 10)...)
	ops = append(ops, completeCalls("acme/ok", "b", 5, 10)...)
	if _, err := e.ConsumeCalls(ctx, ops); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, e)
	for _, op := range up.received() {
		if op.ProjectID() != "acme/ok" {
			t.Fatalf("upstream stored a record of %s", op.ProjectID())
		}
	}
	if got := len(up.received()); got != 20 {
		t.Fatalf("upstream received %d parts, want the 20 of the 10 good calls", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rejected-*.rec"))
	if len(files) != 1 {
		t.Fatalf("rejected files = %v, want one", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	key, kept, err := decodeRecord(raw)
	if err != nil || key != "" || len(kept) != 1 || kept[0].Part.Call.ID != "x-0" {
		t.Fatalf("rejected file holds key %q, %d records (%v), want the one refused record without its key", key, len(kept), err)
	}
}

// randomCalls is one call whose input does not compress.
func randomCalls(seed, size int) []storage.CallOp {
	ops := completeCalls("acme/full", fmt.Sprintf("f%d", seed), 1, 0)
	text := make([]byte, size)
	x := uint32(seed*7919 + 1)
	for i := range text {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		text[i] = 'a' + byte(x%26)
	}
	ops[0].Part.Call.Inputs = []byte(`{"text":"` + string(text) + `"}`)
	return ops
}

func dirSize(t *testing.T, dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".wal") {
			n += info.Size()
		}
	}
	return n
}
