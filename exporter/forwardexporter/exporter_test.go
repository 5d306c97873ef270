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
// arrives once the upstream recovers, each call's start, end and renames
// in the order they were acknowledged, though several batches travel at
// once.
func TestForwardsInOrderThroughUpstreamFailures(t *testing.T) {
	up := newWeaveUpstream(t)
	statuses := []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusInternalServerError}
	up.srv.Config.Handler = flaky(9, func(w http.ResponseWriter, n int32) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(statuses[n%3])
	}, up.srv.Config.Handler)
	cfg := testConfig(t.TempDir(), up.srv.URL)
	cfg.MaxBatchOps = 5
	e := startExporter(t, cfg)
	ctx := WithKey(context.Background(), up.key)
	want := map[string]string{}
	for b := range 30 {
		for _, rec := range callLifecycle(fmt.Sprintf("b%d", b), 7) {
			if _, err := e.ConsumeCalls(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 7 {
			want[fmt.Sprintf("b%d-%d", b, i)] = "start end"
		}
		want[fmt.Sprintf("b%d-0", b)] = "start end rename:first rename:second"
	}
	waitDrained(t, e)
	got := map[string]string{}
	for _, op := range up.received() {
		id, what := "", ""
		switch {
		case op.Update != nil:
			id, what = op.Update.ID, "rename:"+op.Update.DisplayName
		case op.Part.Kind == storage.PartStart:
			id, what = op.Part.Call.ID, "start"
		default:
			id, what = op.Part.Call.ID, "end"
		}
		got[id] = strings.TrimSpace(got[id] + " " + what)
	}
	if len(got) != len(want) {
		t.Fatalf("upstream received %d calls, want %d", len(got), len(want))
	}
	for id, seq := range want {
		if got[id] != seq {
			t.Errorf("call %s arrived as %q, want %q", id, got[id], seq)
		}
	}
}

// callLifecycle is how a Weave client writes n calls: their starts in one
// request, their ends in the next, then two renames of the first.
func callLifecycle(prefix string, n int) [][]storage.CallOp {
	complete := completeCalls("acme/order", prefix, n, 100)
	starts, ends := make([]storage.CallOp, n), make([]storage.CallOp, n)
	for i, op := range complete {
		start, end := *op.Part, *op.Part
		start.Kind, start.Call.EndedAt, start.Call.Summary = storage.PartStart, nil, nil
		end.Kind, end.Call = storage.PartEnd, storage.Call{ProjectID: op.Part.Call.ProjectID, ID: op.Part.Call.ID,
			EndedAt: op.Part.Call.EndedAt, Summary: op.Part.Call.Summary}
		starts[i], ends[i] = storage.CallOp{Part: &start}, storage.CallOp{Part: &end}
	}
	rename := func(name string) []storage.CallOp {
		return []storage.CallOp{{Update: &storage.CallUpdate{ProjectID: "acme/order", ID: complete[0].Part.Call.ID, DisplayName: name}}}
	}
	return [][]storage.CallOp{starts, ends, rename("first"), rename("second")}
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
	if got := len(up.received()); got != len(ops) {
		t.Fatalf("upstream received %d calls, want %d", got, len(ops))
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
	if got := len(up.received()); got != 10 {
		t.Fatalf("upstream received %d calls, want the 10 good ones", got)
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
	if err != nil || key != "" || len(kept.ops) != 1 || kept.ops[0].Part.Call.ID != "x-0" {
		t.Fatalf("rejected file holds key %q, %d records (%v), want the one refused record without its key", key, len(kept.ops), err)
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
