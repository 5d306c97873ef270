package callrecord

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

// sink is a consumer.Calls that stores what it is given, after running
// answer (which may block or refuse).
type sink struct {
	mu      sync.Mutex
	ids     []string
	batches int
	answer  func(ops []storage.CallOp) error
}

func (s *sink) ConsumeCalls(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if s.answer != nil {
		if err := s.answer(ops); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches++
	for _, op := range ops {
		s.ids = append(s.ids, op.Part.Call.ID)
	}
	return make([]storage.CallOpResult, len(ops)), nil
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// value reads a counter or gauge from reg; label is the reason label's
// value, or "" for metrics without labels.
func value(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() != label {
				continue
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

func newRecorder(t *testing.T, s *sink, cfg Config) (*Recorder, *prometheus.Registry, *logBuf) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuf{}
	r := New(s, cfg, m, slog.New(slog.NewTextHandler(logs, nil)))
	if err := r.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return r, reg, logs
}

func call(id string, inputBytes int) storage.Call {
	return storage.Call{ProjectID: "acme/p", ID: id, OpName: "op", Inputs: []byte(`{"x":"` + strings.Repeat("a", inputBytes) + `"}`)}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestRecordReachesThePipelineInBatches(t *testing.T) {
	s := &sink{}
	r, m, _ := newRecorder(t, s, DefaultConfig(1000, 1<<20))
	for i := range 200 {
		r.Record(call(fmt.Sprint(i), 10))
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.count() != 200 || value(t, m, "weft_inference_traced_calls", "") != 200 || value(t, m, "weft_inference_trace_queue_size", "") != 0 {
		t.Fatalf("pipeline got %d calls, recorded %v, queued %v", s.count(), value(t, m, "weft_inference_traced_calls", ""), value(t, m, "weft_inference_trace_queue_size", ""))
	}
	if s.batches >= 200 {
		t.Errorf("%d batches for 200 calls: queued calls should share batches", s.batches)
	}
}

func TestLosses(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		answer   func(release <-chan struct{}) func([]storage.CallOp) error
		calls    int
		reason   string
		lost     float64
		recorded float64
	}{
		{"queue full in calls", Config{MaxCalls: 2, MaxBytes: 1 << 20, MaxBatch: 1, Workers: 1}, blockUntil, 6, LostQueueFull, 3, 3},
		{"queue full in bytes", Config{MaxCalls: 100, MaxBytes: 700, MaxBatch: 1, Workers: 1}, blockUntil, 6, LostQueueFull, 4, 2},
		{"pipeline stays overloaded", Config{MaxCalls: 10, MaxBytes: 1 << 20, MaxBatch: 10, Workers: 1, Retries: 2, Backoff: time.Millisecond},
			always(consumer.ErrOverloaded), 1, LostRefused, 1, 0},
		{"invalid call set aside alone", Config{MaxCalls: 10, MaxBytes: 1 << 20, MaxBatch: 10, Workers: 1},
			refuseID("bad", storage.ErrInvalidArgument), 3, LostInvalid, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			s := &sink{answer: tc.answer(release)}
			r, m, logs := newRecorder(t, s, tc.cfg)
			for i := range tc.calls {
				id := fmt.Sprint(i)
				if i == 1 {
					id = "bad"
				}
				r.Record(call(id, 100))
				if i == 0 {
					waitFor(t, "the first call to be taken", func() bool { return value(t, m, "weft_inference_trace_queue_size", "") == 0 })
				}
			}
			close(release)
			if err := r.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := value(t, m, "weft_inference_lost_calls", tc.reason); got != tc.lost {
				t.Errorf("lost[%s] = %v, want %v", tc.reason, got, tc.lost)
			}
			if got := value(t, m, "weft_inference_traced_calls", ""); got != tc.recorded {
				t.Errorf("recorded = %v, want %v", got, tc.recorded)
			}
			if !strings.Contains(logs.String(), "not traced") || !strings.Contains(logs.String(), tc.reason) {
				t.Errorf("loss not logged:\n%s", logs)
			}
		})
	}
}

// blockUntil holds every batch until release is closed.
func blockUntil(release <-chan struct{}) func([]storage.CallOp) error {
	return func([]storage.CallOp) error { <-release; return nil }
}

func always(err error) func(<-chan struct{}) func([]storage.CallOp) error {
	return func(<-chan struct{}) func([]storage.CallOp) error {
		return func([]storage.CallOp) error { return fmt.Errorf("batch: %w", err) }
	}
}

func refuseID(id string, err error) func(<-chan struct{}) func([]storage.CallOp) error {
	return func(release <-chan struct{}) func([]storage.CallOp) error {
		return func(ops []storage.CallOp) error {
			<-release
			for _, op := range ops {
				if op.Part.Call.ID == id {
					return fmt.Errorf("call %s: %w", id, err)
				}
			}
			return nil
		}
	}
}

func TestShutdownDeadlineCountsWhatIsLeft(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := &sink{}
	s.answer = func(ops []storage.CallOp) error {
		select {
		case <-release:
			return nil
		case <-time.After(300 * time.Millisecond):
			return storage.ErrUnavailable
		}
	}
	r, m, _ := newRecorder(t, s, Config{MaxCalls: 10, MaxBytes: 1 << 20, MaxBatch: 1, Workers: 1, Retries: 100, Backoff: time.Millisecond})
	for i := range 5 {
		r.Record(call(fmt.Sprint(i), 1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("Shutdown took %v past its deadline", time.Since(start))
	}
	r.Record(call("late", 1))
	if got := value(t, m, "weft_inference_lost_calls", LostShutdown); got != 6 {
		t.Fatalf("lost at shutdown = %v, want the 5 queued and the late one", got)
	}
}

// TestLingerGathersCallsIntoOneBatch: calls recorded one by one share a
// batch while it lingers, and a lone call is still delivered once the
// linger ends, without waiting for shutdown.
func TestLingerGathersCallsIntoOneBatch(t *testing.T) {
	tests := []struct {
		name        string
		linger      time.Duration
		wantBatches func(int) bool
	}{
		{"lingering", time.Second, func(n int) bool { return n == 1 }},
		{"sending at once", 0, func(n int) bool { return n > 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			cfg := Config{MaxCalls: 100, MaxBytes: 1 << 20, MaxBatch: 100, Workers: 2, Linger: tc.linger}
			r, _, _ := newRecorder(t, s, cfg)
			defer func() { _ = r.Shutdown(context.Background()) }()
			for i := range 10 {
				r.Record(call(fmt.Sprint(i), 10))
				time.Sleep(5 * time.Millisecond)
			}
			waitFor(t, "10 calls", func() bool { return s.count() == 10 })
			s.mu.Lock()
			defer s.mu.Unlock()
			if !tc.wantBatches(s.batches) {
				t.Errorf("10 calls 5 ms apart went in %d batches", s.batches)
			}
		})
	}
}
