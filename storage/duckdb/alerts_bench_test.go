package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
)

// benchAlerts is how many alert automations a round evaluates.
const benchAlerts = 1_000

// BenchmarkAlertRound times one evaluation round of 1,000 CALL_ALERT
// automations (error rate, latency quantiles, tokens and cost, over 5
// minutes to a day, a third per op) on a store of WEFT_BENCH_CALLS calls
// (default 1M) spread over the day before the round, and reports the
// process CPU (user and system, DuckDB's threads included) per round and
// as a share of one core at the default 60 s interval. In "standard" the
// alerts use the usual windows (5 min, 15 min, 1 h, 1 day); in
// "distinct" every alert has a window of its own. Either way a round
// reads each op filter's calls once, per minute over its longest window,
// and takes every window from those minutes. WEFT_BENCH_DIR keeps
// the store between runs:
//
//	WEFT_BENCH_DIR=/tmp/alerts WEFT_BENCH_CALLS=10000000 go test ./storage/duckdb -run '^$' -bench AlertRound -benchtime 5x
func BenchmarkAlertRound(b *testing.B) {
	s, end := openAlertBenchStore(b)
	defer s.Close()
	ctx := context.Background()
	seedBenchAlerts(b, s, end)
	box, err := secretbox.New(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	now := func() time.Time { return end }
	disp := automations.NewDispatcher(s, box, 256<<10, now)
	measure := automations.Measurer{Calls: s, Price: func(_ context.Context, _ string, usage []storage.ModelUsageBucket) (float64, error) {
		var c float64
		for _, u := range usage {
			c += float64(u.PromptTokens)*2.5e-6 + float64(u.CompletionTokens)*1e-5
		}
		return c, nil
	}}
	for _, set := range []string{"standard", "distinct"} {
		b.Run(set, func(b *testing.B) {
			if _, err := s.db.ExecContext(ctx, "UPDATE automations SET enabled = starts_with(id, ?) WHERE project_id = ?",
				"au_"+set[:1], alertBenchProject); err != nil {
				b.Fatal(err)
			}
			alerts := automations.NewAlerts(s, measure, disp, func() {}, automations.AlertsOptions{Interval: time.Minute,
				Owner: "bench", Evaluate: true}, slog.New(slog.DiscardHandler), now)
			if err := alerts.Round(ctx); err != nil { // the first round records the transitions
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := processCPU(b)
			for range b.N {
				if err := alerts.Round(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cpu := processCPU(b) - cpu0
			b.StopTimer()
			perRound := cpu / time.Duration(b.N)
			b.ReportMetric(float64(perRound.Milliseconds()), "cpu-ms/round")
			b.ReportMetric(100*perRound.Seconds()/time.Minute.Seconds(), "%core@60s")
			var evaluated int
			if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM automation_alert_states WHERE starts_with(automation_id, ?) AND evaluated_at = ?",
				"au_"+set[:1], end).Scan(&evaluated); err != nil || evaluated != benchAlerts {
				b.Fatalf("%d alerts evaluated, %v; want %d", evaluated, err, benchAlerts)
			}
		})
	}
}

// seedBenchAlerts stores a webhook and both sets of alerts, once per
// store.
func seedBenchAlerts(b *testing.B, s *Store, at time.Time) {
	ctx := context.Background()
	var have int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM automations WHERE project_id = ?", alertBenchProject).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == 2*benchAlerts {
		return
	}
	hook := storage.Webhook{Entity: "bench", ID: "wh_bench", Name: "bench", URL: "https://example.com/hook", CreatedAt: at, UpdatedAt: at}
	if err := s.CreateWebhook(ctx, hook); err != nil {
		b.Fatal(err)
	}
	metrics := []string{"error_rate", "call_count", "latency_p95_ms", "latency_p50_ms", "total_tokens", "cost", "error_count", "latency_p99_ms"}
	windows := []int64{300, 900, 3600, 86400}
	for _, set := range []string{"standard", "distinct"} {
		for i := range benchAlerts {
			window := windows[i%len(windows)]
			if set == "distinct" {
				window += int64(i)
			}
			c := map[string]any{"metric": metrics[i%len(metrics)], "window_seconds": window, "comparator": ">", "threshold": float64(i % 7)}
			if i%3 == 0 {
				c["op_names"] = []string{"chat"}
			}
			cond, _ := json.Marshal(c)
			a := storage.Automation{ProjectID: alertBenchProject, ID: fmt.Sprintf("au_%s%04d", set[:1], i),
				Name: fmt.Sprintf("%s %d", set, i), Scope: "project", Event: storage.EventCallAlert, WebhookID: hook.ID,
				Payload: `{"v":${value}}`, Enabled: true, Condition: string(cond), CreatedAt: at, UpdatedAt: at}
			if err := s.CreateAutomation(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// processCPU is the user and system time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const alertBenchProject = "bench/alerts"

// openAlertBenchStore opens (and fills up to WEFT_BENCH_CALLS) a store
// whose calls are spread evenly over a day, one in twenty an error, and
// waits until the per-minute rollups hold them all. It returns the end
// of that day: the time rounds are evaluated at.
func openAlertBenchStore(b *testing.B) (*Store, time.Time) {
	calls := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("WEFT_BENCH_CALLS")); err == nil && n > 0 {
		calls = n
	}
	dir := os.Getenv("WEFT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	ctx := context.Background()
	s, err := Open(ctx, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	end := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	var have int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM calls WHERE project_id = ?", alertBenchProject).Scan(&have); err != nil {
		b.Fatal(err)
	}
	const batch = 5_000
	step := 24 * time.Hour / time.Duration(calls)
	begin := time.Now()
	for n := have / batch; n < calls/batch; n++ {
		ops := make([]storage.CallOp, batch)
		for i := range ops {
			k := n*batch + i
			started := end.Add(-24 * time.Hour).Add(time.Duration(k) * step)
			ended := started.Add(time.Duration(100+k%900) * time.Millisecond)
			c := storage.Call{ProjectID: alertBenchProject, ID: fmt.Sprintf("a%015x", mix64(uint64(k))),
				TraceID: fmt.Sprintf("t%031x", mix64(uint64(k/10))), OpName: []string{"chat", "embed", "rank"}[k%3],
				StartedAt: started, EndedAt: &ended, Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{"q":"hi"}`),
				Output: json.RawMessage(`"ok"`), Summary: json.RawMessage(`{"usage":{"gpt-4o":{"input_tokens":120,"output_tokens":48,"requests":1}}}`)}
			if k%20 == 0 {
				boom := "boom"
				c.Exception = &boom
			}
			ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete, Call: c}}
		}
		if _, err := s.WriteCallOps(ctx, ops); err != nil {
			b.Fatal(err)
		}
	}
	for {
		var dirty int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM call_minutes_dirty").Scan(&dirty); err != nil {
			b.Fatal(err)
		}
		if dirty == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Logf("store of %d calls ready in %v", calls, time.Since(begin).Round(time.Millisecond))
	return s, end
}
