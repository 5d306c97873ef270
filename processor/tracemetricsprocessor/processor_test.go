package tracemetricsprocessor

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func stored(context.Context, []storage.CallOp) ([]storage.CallOpResult, error) { return nil, nil }

func newTestProcessor(t testing.TB, cfg Config, next consumer.CallsFunc, prices PriceSource) *Processor {
	t.Helper()
	defaults, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Enabled = true
	p, err := New(telemetry.NopSettings("tracemetrics"), cfg, next, prices, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

func start(project, id, op string, at time.Time) storage.CallOp {
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart,
		Call: storage.Call{ProjectID: project, ID: id, OpName: op, StartedAt: at}}}
}

func end(project, id string, at time.Time, exception *string, summary string) storage.CallOp {
	c := storage.Call{ProjectID: project, ID: id, EndedAt: &at, Exception: exception}
	if summary != "" {
		c.Summary = []byte(summary)
	}
	return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartEnd, Call: c}}
}

func complete(project, id, op string, from, to time.Time, summary string) storage.CallOp {
	op2 := end(project, id, to, nil, summary)
	op2.Part.Kind = storage.PartComplete
	op2.Part.Call.OpName, op2.Part.Call.StartedAt = op, from
	return op2
}

func consume(t *testing.T, p *Processor, ops ...storage.CallOp) {
	t.Helper()
	if _, err := p.ConsumeCalls(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
}

func calls(p *Processor, project, op, status string) float64 {
	return testutil.ToFloat64(p.f.calls.WithLabelValues(project, op, status))
}

func TestCountsEachFinishedCallOnce(t *testing.T) {
	p := newTestProcessor(t, DefaultConfig(), stored, nil)
	boom := "ValueError: boom"
	const proj = "acme/app"
	consume(t, p, start(proj, "c1", "weave:///acme/app/op/answer:v1", t0), start(proj, "c2", "weave:///acme/app/op/answer:v2", t0))
	if n := testutil.CollectAndCount(p.f.calls); n != 0 {
		t.Fatalf("running calls were counted: %d series", n)
	}
	consume(t, p, end(proj, "c1", t0.Add(2*time.Second), nil, ""), end(proj, "c2", t0.Add(time.Second), &boom, ""))
	// A retried end, and a start arriving again after its end: no new count.
	consume(t, p, end(proj, "c1", t0.Add(2*time.Second), nil, ""), start(proj, "c2", "weave:///acme/app/op/answer:v2", t0))
	if got := calls(p, proj, "answer", "success"); got != 1 {
		t.Errorf("success calls = %v, want 1", got)
	}
	if got := calls(p, proj, "answer", "error"); got != 1 {
		t.Errorf("error calls = %v, want 1", got)
	}
	// An end whose start this process never saw counts under op unknown,
	// and its start arriving later does not count it again.
	consume(t, p, end(proj, "c3", t0, nil, ""))
	consume(t, p, start(proj, "c3", "answer", t0))
	if got := calls(p, proj, unknownOp, "success"); got != 1 {
		t.Errorf("unknown-op calls = %v, want 1", got)
	}
	// A complete part (OTLP span, or start and end merged in one batch).
	consume(t, p, complete(proj, "c4", "retrieve", t0, t0.Add(300*time.Millisecond), ""))
	if got := calls(p, proj, "retrieve", "success"); got != 1 {
		t.Errorf("complete calls = %v, want 1", got)
	}
	out, err := testutil.CollectAndFormat(p.f.duration, expfmt.TypeTextPlain, durationName)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`weft_app_call_duration_seconds_sum{op="answer",project="acme/app",status="success"} 2`,
		`weft_app_call_duration_seconds_sum{op="answer",project="acme/app",status="error"} 1`,
		`weft_app_call_duration_seconds_sum{op="retrieve",project="acme/app",status="success"} 0.3`,
		`weft_app_call_duration_seconds_bucket{op="retrieve",project="acme/app",status="success",le="0.25"} 0`,
		`weft_app_call_duration_seconds_bucket{op="retrieve",project="acme/app",status="success",le="0.5"} 1`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("duration metrics lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `op="unknown"`) {
		t.Errorf("a call without a known start has no duration:\n%s", out)
	}
}

func TestFailedExportCountsNothing(t *testing.T) {
	failing := func(context.Context, []storage.CallOp) ([]storage.CallOpResult, error) {
		return nil, storage.ErrUnavailable
	}
	p := newTestProcessor(t, DefaultConfig(), failing, nil)
	if _, err := p.ConsumeCalls(context.Background(), []storage.CallOp{complete("a/b", "c", "op", t0, t0, "")}); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("err = %v, want the exporter's", err)
	}
	if n := testutil.CollectAndCount(p.f.calls); n != 0 {
		t.Fatalf("a call that was not stored was counted: %d series", n)
	}
	// The retry that succeeds counts it.
	p.next = consumer.CallsFunc(stored)
	consume(t, p, complete("a/b", "c", "op", t0, t0, ""))
	if got := calls(p, "a/b", "op", "success"); got != 1 {
		t.Errorf("calls = %v, want 1", got)
	}
}

func TestBoundsAndOverflow(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxProjects, cfg.MaxOpsPerProject, cfg.MaxModelsPerProject = 2, 2, 1
	p := newTestProcessor(t, cfg, stored, nil)
	usage := func(model string) string { return `{"usage": {"` + model + `": {"prompt_tokens": 10}}}` }
	id := 0
	call := func(project, op, model string) storage.CallOp {
		id++
		return complete(project, "c"+string(rune('a'+id)), op, t0, t0, usage(model))
	}
	consume(t, p,
		call("e/p1", "op1", "m1"), call("e/p1", "op2", "m2"), call("e/p1", "op3", "m1"), call("e/p1", "op1", "m3"),
		call("e/p2", "op1", "m1"),
		call("e/p3", "opA", "m1"), call("e/p4", "opB", "m2"))
	for _, tc := range []struct {
		project, op string
		want        float64
	}{
		{"e/p1", "op1", 2}, {"e/p1", "op2", 1}, {"e/p1", otherLabel, 1},
		{"e/p2", "op1", 1},
		{otherLabel, "opA", 1}, {otherLabel, "opB", 1},
	} {
		if got := calls(p, tc.project, tc.op, "success"); got != tc.want {
			t.Errorf("calls{project=%s,op=%s} = %v, want %v", tc.project, tc.op, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(p.f.calls); n != 6 {
		t.Errorf("calls series = %d, want 6 (the bounds hold)", n)
	}
	tokens := func(project, model string) float64 {
		return testutil.ToFloat64(p.f.tokens.WithLabelValues(project, model, "input"))
	}
	if got := tokens("e/p1", "m1"); got != 20 {
		t.Errorf("tokens{e/p1,m1} = %v, want 20", got)
	}
	if got := tokens("e/p1", otherLabel); got != 20 {
		t.Errorf("tokens{e/p1,other} = %v, want 20 (m2 and m3 past the bound)", got)
	}
	overflow := func(bound int) float64 { return testutil.ToFloat64(p.f.overflow[bound]) }
	if got := overflow(boundProjects); got != 2 {
		t.Errorf("project overflow = %v, want 2", got)
	}
	if got := overflow(boundOps); got != 1 {
		t.Errorf("op overflow = %v, want 1", got)
	}
	// m2 and m3 in e/p1, and m2 in the "other" project after m1 there.
	if got := overflow(boundModels); got != 3 {
		t.Errorf("model overflow = %v, want 3", got)
	}
}

func TestOpenCallsForgetOldest(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxOpenCalls = 2
	p := newTestProcessor(t, cfg, stored, nil)
	consume(t, p, start("a/b", "1", "slow", t0), start("a/b", "2", "x", t0), start("a/b", "3", "x", t0))
	if got := testutil.ToFloat64(p.f.overflow[boundOpenCalls]); got != 1 {
		t.Errorf("open-calls overflow = %v, want 1", got)
	}
	consume(t, p, end("a/b", "1", t0, nil, ""), end("a/b", "3", t0, nil, ""))
	if got := calls(p, "a/b", unknownOp, "success"); got != 1 {
		t.Errorf("the forgotten call's end: unknown = %v, want 1", got)
	}
	if got := calls(p, "a/b", "x", "success"); got != 1 {
		t.Errorf("x = %v, want 1", got)
	}
}

// fakePrices is a project's own prices, counting reads.
type fakePrices struct {
	mu    sync.Mutex
	rows  []pricing.Price
	reads map[string]int
}

func (f *fakePrices) AllProjectPrices(_ context.Context, project string) ([]pricing.Price, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[project]++
	var out []pricing.Price
	for _, r := range f.rows {
		if r.LevelID == project {
			out = append(out, r)
		}
	}
	return out, nil
}

func TestCostAtDefaultAndProjectPrices(t *testing.T) {
	own := &fakePrices{rows: []pricing.Price{{LLMID: "gpt-4.1", Level: pricing.LevelProject, LevelID: "e/own",
		EffectiveDate: t0.AddDate(-1, 0, 0), PromptTokenCost: 1, CompletionTokenCost: 2, CacheReadInputTokenCost: 0.5,
		PromptTokenCostUnit: pricing.UnitUSD, CompletionTokenCostUnit: pricing.UnitUSD}}, reads: map[string]int{}}
	p := newTestProcessor(t, DefaultConfig(), stored, own)
	summary := `{"usage": {"gpt-4.1": {"prompt_tokens": 1000, "completion_tokens": 100, "cache_read_input_tokens": 200}, "no-such-model": {"prompt_tokens": 5}}}`
	consume(t, p, complete("e/def", "1", "op", t0, t0, summary))
	// gpt-4.1 defaults: 2e-6 input, 8e-6 output, 5e-7 cache read.
	want := 800*2e-6 + 100*8e-6 + 200*5e-7
	if got := testutil.ToFloat64(p.f.cost.WithLabelValues("e/def", "gpt-4.1")); math.Abs(got-want) > 1e-12 {
		t.Errorf("default-priced cost = %v, want %v", got, want)
	}
	if n := testutil.CollectAndCount(p.f.cost); n != 1 {
		t.Errorf("cost series = %d, want 1 (an unpriced model has none)", n)
	}
	if got := testutil.ToFloat64(p.f.tokens.WithLabelValues("e/def", "no-such-model", "input")); got != 5 {
		t.Errorf("unpriced model's tokens = %v, want 5", got)
	}
	// The project's own price applies once read (in the background).
	consume(t, p, complete("e/own", "2", "op", t0, t0, summary))
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.prices.mu.Lock()
		_, read := p.prices.projects["e/own"]
		p.prices.mu.Unlock()
		if read || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	before := testutil.ToFloat64(p.f.cost.WithLabelValues("e/own", "gpt-4.1"))
	consume(t, p, complete("e/own", "3", "op", t0, t0, summary))
	got := testutil.ToFloat64(p.f.cost.WithLabelValues("e/own", "gpt-4.1")) - before
	if want := 800*1.0 + 100*2.0 + 200*0.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("project-priced cost = %v, want %v", got, want)
	}
	own.mu.Lock()
	defer own.mu.Unlock()
	if own.reads["e/own"] != 1 {
		t.Errorf("project prices read %d times, want once (cached)", own.reads["e/own"])
	}
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"ops", func(c *Config) { c.MaxOpsPerProject = 0 }, "trace_metrics.max_ops_per_project"},
		{"projects", func(c *Config) { c.MaxProjects = -1 }, "trace_metrics.max_projects"},
		{"models", func(c *Config) { c.MaxModelsPerProject = 0 }, "trace_metrics.max_models_per_project"},
		{"open", func(c *Config) { c.MaxOpenCalls = 0 }, "trace_metrics.max_open_calls"},
		{"endpoint", func(c *Config) { c.OTLPEndpoint = "collector:4318" }, "trace_metrics.otlp_endpoint"},
		{"interval", func(c *Config) { c.OTLPEndpoint, c.OTLPInterval = "http://c:4318", time.Millisecond }, "trace_metrics.otlp_interval"},
		{"headers", func(c *Config) { c.OTLPEndpoint, c.OTLPHeaders = "http://c:4318", map[string]string{"a b": "x"} }, "trace_metrics.otlp_headers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
	c := DefaultConfig()
	c.OTLPEndpoint = "http://collector:4318"
	if u, err := c.endpointURL(); err != nil || u != "http://collector:4318/v1/metrics" {
		t.Errorf("endpointURL = %q, %v", u, err)
	}
}
