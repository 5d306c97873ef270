package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/exporter/storageexporter"
	"github.com/weftdev/weft/internal/syncbuf"
	"github.com/weftdev/weft/internal/wal"
	"github.com/weftdev/weft/receiver/otlpreceiver"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

// refusingStore is the embedded store with call writes that wait, fail or
// crawl on demand.
type refusingStore struct {
	*duckdb.Store
	// refuse: a write holding a call whose id starts with it fails as
	// DuckDB fails a merge that needs more memory than its limit.
	refuse string
	// hold, when set, keeps writes waiting until it is closed.
	hold  chan struct{}
	delay time.Duration
	// down: every write fails, probes included.
	down atomic.Bool
}

func (s *refusingStore) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if s.hold != nil {
		<-s.hold
	}
	time.Sleep(s.delay)
	if s.down.Load() {
		return nil, errors.New("IO Error: could not write file: No space left on device")
	}
	for _, op := range ops {
		if s.refuse != "" && op.Part != nil && strings.HasPrefix(op.Part.Call.ID, s.refuse) {
			return nil, errors.New("merge calls: Out of Memory Error: could not allocate block of size 512.0 MiB (384.0 MiB/384.0 MiB used)")
		}
	}
	return s.Store.WriteCallOps(ctx, ops)
}

func (s *refusingStore) ProbeWrites(ctx context.Context) error {
	if s.down.Load() {
		return errors.New("IO Error: could not write file: No space left on device")
	}
	return s.Store.ProbeWrites(ctx)
}

// node is a weft serving on a data directory, with its log kept.
type node struct {
	t      *testing.T
	srv    *Server
	url    string
	key    string
	logs   *syncbuf.Buffer
	stop   context.CancelFunc
	done   chan error
	http   *http.Client
	duckdb *duckdb.Store
}

func testNodeConfig(dataDir string) config.Config {
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Listen, cfg.OTLPGRPCListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.WAL.RecordAttempts, cfg.WAL.RecordBackoff = 3, 10*time.Millisecond
	cfg.UI = false
	return cfg
}

// startNode serves cfg's data directory, with its call writes going
// through wrap when it is set.
func startNode(t *testing.T, cfg config.Config, wrap func(*duckdb.Store) backend) *node {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{t: t, logs: &syncbuf.Buffer{}, stop: cancel, done: make(chan error, 1), http: &http.Client{Timeout: 30 * time.Second}}
	logger := slog.New(slog.NewTextHandler(n.logs, nil))
	roles, err := config.ParseRoles(cfg.Roles)
	if err != nil {
		t.Fatal(err)
	}
	store, keys, err := openBackend(ctx, cfg, logger, options{})
	if err != nil {
		t.Fatal(err)
	}
	n.duckdb = store.(*duckdb.Store)
	if wrap != nil {
		store = wrap(n.duckdb)
	}
	begin := time.Now()
	if n.srv, err = newServer(ctx, cfg, roles, logger, store, keys, newRetentionSource(cfg.Retention, logger)); err != nil {
		t.Fatal(err)
	}
	if err := n.srv.Listen(); err != nil {
		t.Fatal(err)
	}
	go func() { n.done <- n.srv.Serve(ctx) }()
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("the server took %v to listen", took)
	}
	n.url = n.srv.Scheme() + "://" + n.srv.Addr()
	k, secret, err := auth.NewKey("e", auth.RoleAdmin, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.PutKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	n.key = secret
	t.Cleanup(func() {
		n.stop()
		<-n.done
	})
	return n
}

// shutdown stops the node as SIGTERM does and returns how long it took.
func (n *node) shutdown() time.Duration {
	begin := time.Now()
	n.stop()
	if err := <-n.done; err != nil {
		n.t.Errorf("Serve: %v", err)
	}
	n.done <- nil // for the cleanup
	return time.Since(begin)
}

func (n *node) do(method, path string, body []byte, hdr ...string) (int, http.Header, []byte) {
	n.t.Helper()
	req, err := http.NewRequest(method, n.url+path, bytes.NewReader(body))
	if err != nil {
		n.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if n.key != "" {
		req.Header.Set("Authorization", "Bearer "+n.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := n.http.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		n.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// readyBody is what GET /ready answers.
type readyBody struct {
	Status  string        `json:"status"`
	Reasons []readyReason `json:"reasons"`
}

type readyReason struct {
	Reason   string `json:"reason"`
	Done     uint64 `json:"log_records_done"`
	Total    uint64 `json:"log_records_total"`
	Failures int    `json:"consecutive_failures"`
}

func (n *node) ready() (int, readyBody) {
	n.t.Helper()
	status, _, body := n.do(http.MethodGet, "/ready", nil)
	var rb readyBody
	if err := json.Unmarshal(body, &rb); err != nil {
		n.t.Fatalf("/ready body %s: %v", body, err)
	}
	return status, rb
}

func (rb readyBody) has(reason string) bool {
	return slices.ContainsFunc(rb.Reasons, func(r readyReason) bool { return r.Reason == reason })
}

func (n *node) waitReady(within time.Duration) {
	n.t.Helper()
	deadline := time.Now().Add(within)
	for {
		status, rb := n.ready()
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("/ready still %d %+v after %v", status, rb, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storedIDs lists the call rows of the store, one entry per row.
func (n *node) storedIDs() []string {
	n.t.Helper()
	rows, err := n.duckdb.DB().QueryContext(context.Background(), "SELECT id FROM calls ORDER BY id")
	if err != nil {
		n.t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			n.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		n.t.Fatal(err)
	}
	return ids
}

// leaveLog leaves batches in dataDir's write-ahead log, acknowledged by a
// run that died before the store took any.
func leaveLog(t *testing.T, dataDir string, batches ...[]storage.CallOp) {
	t.Helper()
	l, err := wal.Open(filepath.Join(dataDir, "wal"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ops := range batches {
		if _, err := l.Append(storageexporter.EncodeRecord(ops)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func callStart(id string, inputs string) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: id,
		TraceID: "trace-" + id, OpName: "op", StartedAt: time.Now().UTC(), Attributes: []byte(`{}`), Inputs: []byte(inputs)}}}
}

func rejectedFiles(t *testing.T, dataDir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dataDir, "wal", "rejected-*"))
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"poison-1", "poison-2", "huge"} {
			if bytes.Contains(raw, []byte(id)) {
				held[id] = true
			}
		}
		held[filepath.Base(f)] = true
	}
	return held
}

func otlpBody(t *testing.T) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("wandb.entity", "e")
	rs.Resource().Attributes().PutStr("wandb.project", "p")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("op")
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{2})
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func startBody(id string) []byte {
	return fmt.Appendf(nil, `{"start":{"project_id":"e/p","id":%q,"trace_id":"t-%s","op_name":"op","started_at":"2025-01-01T00:00:00Z","attributes":{},"inputs":{}}}`, id, id)
}

// The poisoned data directory of the issue: acknowledged call starts in
// the write-ahead log whose merge the store refuses as out of memory. The
// server listens at once; while the log replays, writes (Weave, OTLP/HTTP,
// OTLP/gRPC) get 503 with Retry-After and /ready says why; the refused
// records are set aside in the rejected file, counted and logged with
// project and call id; every other record is stored; /ready turns 200
// and writes succeed.
func TestPoisonedLogStartsServesAndSetsAsideWhatTheStoreRefuses(t *testing.T) {
	dataDir := t.TempDir()
	leaveLog(t, dataDir,
		[]storage.CallOp{callStart("ok-1", `{"a":1}`), callStart("poison-1", `{"a":2}`)},
		[]storage.CallOp{callStart("ok-2", `{"a":3}`), callStart("poison-2", `{"a":4}`)},
		[]storage.CallOp{callStart("ok-3", `{"a":5}`)})
	var store *refusingStore
	n := startNode(t, testNodeConfig(dataDir), func(s *duckdb.Store) backend {
		store = &refusingStore{Store: s, refuse: "poison", hold: make(chan struct{})}
		return store
	})

	if status, _, body := n.do(http.MethodGet, "/health", nil); status != http.StatusOK {
		t.Fatalf("/health during the replay = %d %s", status, body)
	}
	status, rb := n.ready()
	if status != http.StatusServiceUnavailable || len(rb.Reasons) != 1 || rb.Reasons[0].Reason != "replaying_log" || rb.Reasons[0].Total != 3 {
		t.Fatalf("/ready during the replay = %d %+v, want 503 replaying_log of 3 log records", status, rb)
	}
	status, hdr, body := n.do(http.MethodPost, "/call/start", startBody("during"))
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("/call/start during the replay = %d (Retry-After %q) %s, want 503 with Retry-After", status, hdr.Get("Retry-After"), body)
	}
	status, hdr, body = n.do(http.MethodPost, otlpreceiver.TracesPath, otlpBody(t), "Content-Type", "application/x-protobuf")
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("OTLP/HTTP during the replay = %d (Retry-After %q) %s, want 503 with Retry-After", status, hdr.Get("Retry-After"), body)
	}
	cc, err := grpc.NewClient(n.srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(otlpBody(t)); err != nil {
		t.Fatal(err)
	}
	gctx := metadata.AppendToOutgoingContext(context.Background(), "wandb-api-key", n.key)
	if _, err := ptraceotlp.NewGRPCClient(cc).Export(gctx, req); grpcstatus.Code(err) != codes.Unavailable {
		t.Fatalf("OTLP/gRPC during the replay = %v, want UNAVAILABLE", err)
	}

	close(store.hold)
	n.waitReady(60 * time.Second)
	if got, want := n.storedIDs(), []string{"ok-1", "ok-2", "ok-3"}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	held := rejectedFiles(t, dataDir)
	if !held["poison-1"] || !held["poison-2"] {
		t.Fatalf("rejected files hold %v, want both poisoned records", held)
	}
	_, _, metrics := n.do(http.MethodGet, "/metrics", nil)
	if !strings.Contains(string(metrics), `weft_storage_rejected_calls{backend="duckdb"} 2`) {
		t.Errorf("metrics do not count the two records set aside:\n%s", grepLines(string(metrics), "rejected"))
	}
	for _, id := range []string{"poison-1", "poison-2"} {
		if !strings.Contains(n.logs.String(), "project=e/p call_id="+id) {
			t.Errorf("no log line names project e/p and call %s", id)
		}
	}
	if status, _, body := n.do(http.MethodPost, "/call/start", startBody("after")); status != http.StatusOK {
		t.Fatalf("/call/start after the replay = %d %s", status, body)
	}
	if err := n.srv.write.barrier(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := n.storedIDs(); !slices.Contains(got, "after") {
		t.Fatalf("the write after the replay is not stored: %v", got)
	}
}

// The same with DuckDB refusing for real: a record whose inputs are larger
// than the store's whole memory limit, which no attempt can store.
func TestPoisonedLogUnderTheStoresMemoryLimit(t *testing.T) {
	dataDir := t.TempDir()
	huge := `{"text":"` + strings.Repeat("x", 96<<20) + `"}`
	leaveLog(t, dataDir,
		[]storage.CallOp{callStart("ok-1", `{"a":1}`)},
		[]storage.CallOp{callStart("huge", huge), callStart("ok-2", `{"a":2}`)},
		[]storage.CallOp{callStart("ok-3", `{"a":3}`)})
	huge = ""
	cfg := testNodeConfig(dataDir)
	cfg.DuckDBMemoryMB = 64
	n := startNode(t, cfg, nil)
	n.waitReady(120 * time.Second)
	if got, want := n.storedIDs(), []string{"ok-1", "ok-2", "ok-3"}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if held := rejectedFiles(t, dataDir); !held["huge"] {
		t.Fatalf("rejected files hold %v, want the record larger than the memory limit", held)
	}
	if !strings.Contains(n.logs.String(), "project=e/p call_id=huge") {
		t.Error("no log line names the record set aside")
	}
	if status, _, body := n.do(http.MethodPost, "/call/start", startBody("after")); status != http.StatusOK {
		t.Fatalf("/call/start after the replay = %d %s", status, body)
	}
}

// SIGTERM during a long replay stops the server within shutdown_timeout,
// with a read that waited for the replay answered; the next start
// finishes the replay without losing or duplicating a record.
func TestSIGTERMDuringReplayStopsInTimeAndTheNextStartFinishes(t *testing.T) {
	dataDir := t.TempDir()
	const calls = 100
	batches := make([][]storage.CallOp, calls)
	for i := range batches {
		batches[i] = []storage.CallOp{callStart(fmt.Sprintf("c%03d", i), `{}`)}
	}
	leaveLog(t, dataDir, batches...)
	cfg := testNodeConfig(dataDir)
	cfg.WAL.MaxApplyOps = 1 // a transaction per record: a replay of several seconds
	cfg.ShutdownTimeout = 3 * time.Second
	n := startNode(t, cfg, func(s *duckdb.Store) backend { return &refusingStore{Store: s, delay: 50 * time.Millisecond} })
	for {
		status, rb := n.ready()
		if status == http.StatusOK {
			t.Fatal("the replay ended before the test could stop it")
		}
		if len(rb.Reasons) > 0 && rb.Reasons[0].Done >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	read := make(chan int, 1)
	go func() {
		status, _, _ := n.do(http.MethodPost, "/calls/stream_query", []byte(`{"project_id":"e/p"}`))
		read <- status
	}()
	time.Sleep(50 * time.Millisecond) // the read waits for the replay
	if took := n.shutdown(); took > cfg.ShutdownTimeout {
		t.Fatalf("shutdown during the replay took %v, over shutdown_timeout %v", took, cfg.ShutdownTimeout)
	}
	if status := <-read; status != http.StatusServiceUnavailable && status != http.StatusOK {
		t.Errorf("the read waiting for the replay got %d", status)
	}
	if mark := wal.ReadMark(filepath.Join(dataDir, "wal", "applied")); mark == 0 || mark >= calls {
		t.Errorf("applied mark %d after a replay cut short, want the progress kept", mark)
	}

	next := startNode(t, testNodeConfig(dataDir), nil)
	next.waitReady(60 * time.Second)
	got := next.storedIDs()
	if len(got) != calls || len(slices.Compact(slices.Clone(got))) != calls {
		t.Fatalf("%d rows, %d calls after the next start; want each of %d once", len(got), len(slices.Compact(slices.Clone(got))), calls)
	}
}

// A store that takes no writes at all is retried during the replay, with
// /ready saying so, not emptied into the rejected file.
func TestStoreDownDuringReplayIsRetriedNotSetAside(t *testing.T) {
	dataDir := t.TempDir()
	leaveLog(t, dataDir, []storage.CallOp{callStart("a", `{}`), callStart("b", `{}`)}, []storage.CallOp{callStart("c", `{}`)})
	var store *refusingStore
	n := startNode(t, testNodeConfig(dataDir), func(s *duckdb.Store) backend {
		store = &refusingStore{Store: s}
		store.down.Store(true)
		return store
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, rb := n.ready()
		if status == http.StatusServiceUnavailable && rb.has("store_refusing_writes") && rb.has("replaying_log") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready = %d %+v, want store_refusing_writes during the replay", status, rb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // several retries
	if held := rejectedFiles(t, dataDir); len(held) != 0 {
		t.Fatalf("records set aside while the store was down: %v", held)
	}
	store.down.Store(false)
	n.waitReady(30 * time.Second)
	if got, want := n.storedIDs(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	if held := rejectedFiles(t, dataDir); len(held) != 0 {
		t.Fatalf("records set aside: %v", held)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
