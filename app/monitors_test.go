package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
	"github.com/weftdev/weft/monitors"
)

// monitorsEnv is a server whose gateway has judges on the fake upstream:
// judge (priced), broken (503 every time) and garbled (answers no JSON).
func monitorsEnv(t *testing.T, mutate ...func(*config.Config)) (*env, *upstreamtest.Server) {
	t.Helper()
	up := upstreamtest.New(upstreamtest.Options{Record: true})
	t.Cleanup(up.Close)
	t.Setenv("WEFT_APP_TEST_KEY", "sk-x")
	e := newEnv(t, append([]func(*config.Config){func(c *config.Config) {
		c.Inference.Providers = []catalog.ProviderConfig{{Name: "local", BaseURL: up.BaseURL(), APIKeyEnv: "WEFT_APP_TEST_KEY"}}
		model := func(id, upstream string) catalog.ModelConfig {
			return catalog.ModelConfig{ID: id, Upstreams: []catalog.UpstreamConfig{{Provider: "local", Model: upstream}},
				Prices: catalog.Prices{InputPerMillion: 1e6, OutputPerMillion: 1e6}} // a dollar a token
		}
		c.Inference.Models = []catalog.ModelConfig{model("judge", "judge"), model("broken", "fail-503"), model("garbled", "judge-garbled")}
		c.Monitors.Interval, c.Monitors.RefreshInterval, c.Monitors.MaxAttempts = 20*time.Millisecond, 50*time.Millisecond, 2
	}}, mutate...)...)
	return e, up
}

// publishJudge stores an LLM-as-judge scorer whose verdict is a boolean
// with a reason, and returns its ref.
func (e *env) publishJudge(name, model, prompt string) string {
	e.t.Helper()
	val := map[string]any{"_type": "LLMAsAJudgeScorer", "_class_name": "LLMAsAJudgeScorer", "_bases": []string{"Scorer", "Object", "BaseModel"},
		"name": name, "description": nil, "column_map": nil, "scoring_prompt": prompt,
		"model": map[string]any{"_type": "LLMStructuredCompletionModel", "_class_name": "LLMStructuredCompletionModel",
			"_bases": []string{"BaseObject", "BaseModel"}, "llm_model_id": model,
			"default_params": map[string]any{"messages_template": []any{}, "temperature": 0, "response_format": "json",
				"response_format_schema": map[string]any{"type": "object", "required": []string{"verdict", "reason"},
					"properties": map[string]any{"verdict": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}}}}}}
	var res struct{ Digest string }
	e.ok("/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": name, "val": val}}, &res)
	return "weave:///acme/app/object/" + name + ":" + res.Digest
}

// publishMonitor stores an active Monitor object and returns its ref.
func (e *env) publishMonitor(name string, rate float64, ops, scorers []string, extra map[string]any) string {
	e.t.Helper()
	val := map[string]any{"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"},
		"name": name, "description": nil, "sampling_rate": rate, "scorers": scorers, "op_names": ops, "query": nil, "active": true}
	for k, v := range extra {
		val[k] = v
	}
	var res struct{ Digest string }
	e.ok("/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/app", "object_id": name, "val": val}}, &res)
	return "weave:///acme/app/object/" + name + ":" + res.Digest
}

// writeOpCalls stores ended calls of op with the given outputs.
func (e *env) writeOpCalls(op, prefix string, outputs ...string) []string {
	e.t.Helper()
	now := time.Now().UTC()
	var batch []any
	var ids []string
	for i, out := range outputs {
		id := fmt.Sprintf("%s-%03d", prefix, i)
		ids = append(ids, id)
		start := map[string]any{"project_id": "acme/app", "id": id, "trace_id": "t-" + id, "op_name": op,
			"started_at": now.Add(-time.Second).Format(time.RFC3339Nano), "attributes": map[string]any{}, "inputs": map[string]any{"q": "question " + id}}
		end := map[string]any{"project_id": "acme/app", "id": id, "ended_at": now.Format(time.RFC3339Nano), "output": out, "summary": map[string]any{}}
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": start}},
			map[string]any{"mode": "end", "req": map[string]any{"end": end}})
	}
	e.ok("/call/upsert_batch", map[string]any{"batch": batch}, nil)
	return ids
}

type monitorStatusRes struct {
	Monitors []struct {
		Name                    string
		MonitorRef              string `json:"monitor_ref"`
		Scored, Failed, Skipped int64
		SpendToday              float64 `json:"spend_today_usd"`
		Errors                  []struct {
			CallID, Status, Message string
		}
	}
}

func (e *env) monitorStatus() map[string]int {
	e.t.Helper()
	var res monitorStatusRes
	e.ok("/monitors/status", map[string]any{"project_id": "acme/app"}, &res)
	out := map[string]int{}
	for _, m := range res.Monitors {
		out[m.Name+".scored"], out[m.Name+".failed"], out[m.Name+".skipped"] = int(m.Scored), int(m.Failed), int(m.Skipped)
		out[m.Name+".errors"] = len(m.Errors)
	}
	return out
}

// verdicts are the runnable feedback rows of the project by call id.
func (e *env) verdicts(feedbackType string) map[string][]map[string]any {
	e.t.Helper()
	var res struct{ Result []map[string]any }
	e.ok("/feedback/query", map[string]any{"project_id": "acme/app", "limit": 10000,
		"query": map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "feedback_type"},
			map[string]any{"$literal": feedbackType}}}}}, &res)
	out := map[string][]map[string]any{}
	for _, r := range res.Result {
		id := strings.TrimPrefix(r["weave_ref"].(string), "weave:///acme/app/call/")
		out[id] = append(out[id], r)
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMonitorScoresStoredCalls: a monitor published as the SDK publishes
// it scores every stored call of its op, once, storing each verdict as
// runnable feedback pointing at the scorer, the monitor and a score call;
// calls of other ops are left alone, the calls query filters by the
// verdict, and the status counts it.
func TestMonitorScoresStoredCalls(t *testing.T) {
	e, up := monitorsEnv(t)
	judge := e.publishJudge("helpful", "judge", "Rate the answer to {inputs.q}. The answer: {output}")
	// No cap: at a dollar a token the default cap would stop the monitor
	// after its first answer.
	mon := e.publishMonitor("quality", 1, []string{"answer"}, []string{judge}, map[string]any{"daily_spend_cap_usd": 0})
	ids := e.writeOpCalls("answer", "a", "a good answer", "a bad answer", "good again")
	e.writeOpCalls("other", "o", "good but unwatched")

	waitFor(t, "three verdicts", func() bool { return len(e.verdicts("wandb.runnable.helpful")) == 3 })
	time.Sleep(200 * time.Millisecond) // no second verdict arrives
	got := e.verdicts("wandb.runnable.helpful")
	for i, id := range ids {
		rows := got[id]
		if len(rows) != 1 {
			t.Fatalf("call %s has %d verdicts, want 1", id, len(rows))
		}
		r := rows[0]
		payload, _ := json.Marshal(r["payload"])
		want := fmt.Sprintf(`"verdict":%t`, i != 1)
		if !strings.Contains(string(payload), want) || r["runnable_ref"] != judge || r["trigger_ref"] != mon {
			t.Fatalf("verdict of %s = %v; want payload.output with %s, runnable_ref %s, trigger_ref %s", id, r, want, judge, mon)
		}
		scoreCall := strings.TrimPrefix(r["call_ref"].(string), "weave:///acme/app/call/")
		var read struct{ Call map[string]any }
		e.ok("/call/read", map[string]any{"project_id": "acme/app", "id": scoreCall}, &read)
		if op, _ := read.Call["op_name"].(string); !strings.Contains(op, "/op/helpful.score:") {
			t.Fatalf("score call %s = %v, want op helpful.score", scoreCall, read.Call)
		}
	}
	if n := len(up.Requests()); n != 3 {
		t.Fatalf("the judge was asked %d times, want 3 (each call once; the unwatched op and the score calls never)", n)
	}
	if prompt := string(up.Requests()[0].Body["messages"]); !strings.Contains(prompt, "Rate the answer to question a-") {
		t.Fatalf("the judge's prompt %s is not the rendered template", prompt)
	}
	// The calls query filters by the verdict, as the calls table does.
	var calls []map[string]any
	status, _, out := e.do(http.MethodPost, "/calls/stream_query", e.member, map[string]any{"project_id": "acme/app",
		"query": map[string]any{"$expr": map[string]any{"$eq": []any{
			map[string]any{"$getField": "feedback.[wandb.runnable.helpful].payload.output.verdict"}, map[string]any{"$literal": true}}}}})
	if status != 200 {
		t.Fatalf("calls query by verdict = %d %s", status, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c map[string]any
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	if len(calls) != 2 || calls[0]["id"] != ids[0] || calls[1]["id"] != ids[2] {
		t.Fatalf("calls with a true verdict = %v, want %s and %s", calls, ids[0], ids[2])
	}
	// /feedback/aggregate charts a monitor's verdicts by its trigger_ref.
	now := time.Now()
	status, _, out = e.do(http.MethodPost, "/feedback/aggregate", e.member, map[string]any{"project_id": "acme/app",
		"after_ms": now.Add(-time.Hour).UnixMilli(), "before_ms": now.Add(time.Minute).UnixMilli(),
		"feedback_types": []string{"wandb.runnable.helpful"}, "monitor_ids": []string{"quality"}})
	if status != 200 || !strings.Contains(string(out), `"total_count":3`) {
		t.Fatalf("/feedback/aggregate of the monitor = %d %s, want its 3 verdicts counted", status, out)
	}
	if st := e.monitorStatus(); st["quality.scored"] != 3 || st["quality.failed"] != 0 {
		t.Fatalf("status = %v, want 3 scored", st)
	}
}

// TestMonitorSamplesAndCaps: a monitor scores its sampling rate's share
// of calls (decided per call, so the same calls every time) and stops at
// its daily spend cap, recording the calls it skipped. One judge at a
// time: with more, the cap may be passed by the answers in flight.
func TestMonitorSamplesAndCaps(t *testing.T) {
	e, up := monitorsEnv(t, func(c *config.Config) { c.Monitors.Workers = 1 })
	judge := e.publishJudge("sampler", "judge", "Is {output} good?")
	// A cap of 0 is none (the default cap would stop this one).
	e.publishMonitor("half", 0.5, []string{"sampled"}, []string{judge}, map[string]any{"daily_spend_cap_usd": 0})
	outputs := make([]string, 60)
	for i := range outputs {
		outputs[i] = "good"
	}
	ids := e.writeOpCalls("sampled", "s", outputs...)
	want := 0
	for _, id := range ids {
		if monitors.Sampled("half", id, 0.5) {
			want++
		}
	}
	if want < 15 || want > 45 {
		t.Fatalf("a 0.5 sample of 60 calls holds %d", want)
	}
	waitFor(t, "the sample's verdicts", func() bool { return len(e.verdicts("wandb.runnable.sampler")) >= want })
	time.Sleep(200 * time.Millisecond)
	n := len(e.verdicts("wandb.runnable.sampler"))
	if n != want || int64(n) != up.Served() {
		t.Fatalf("%d verdicts from %d judge answers", n, up.Served())
	}

	capped := e.publishJudge("capped", "judge", "Is {output} good?")
	// Each answer costs dollars at a dollar a token: the first spends the
	// cap, the rest are skipped.
	e.publishMonitor("thrifty", 1, []string{"costly"}, []string{capped}, map[string]any{"daily_spend_cap_usd": 1})
	e.writeOpCalls("costly", "c", "good", "good", "good", "good")
	waitFor(t, "the capped monitor's results", func() bool {
		st := e.monitorStatus()
		return st["thrifty.scored"]+st["thrifty.skipped"] == 4
	})
	st := e.monitorStatus()
	if st["thrifty.scored"] != 1 || st["thrifty.skipped"] != 3 {
		t.Fatalf("status = %v; want 1 scored within the cap and 3 skipped", st)
	}
}

// TestMonitorRecordsFailingJudges: a judge whose upstream keeps failing
// is asked again, then recorded as failed with the upstream's error; one
// that answers something other than its verdict fails at once; neither
// stores a verdict, and both show on the monitor's status.
func TestMonitorRecordsFailingJudges(t *testing.T) {
	// The gateway's own retries off, so each round asks the upstream once.
	e, up := monitorsEnv(t, func(c *config.Config) { c.Inference.Retry.MaxRetries = 0 })
	broken := e.publishJudge("down", "broken", "Is {output} good?")
	garbled := e.publishJudge("mumbler", "garbled", "Is {output} good?")
	e.publishMonitor("fragile", 1, []string{"answer"}, []string{broken, garbled}, nil)
	e.writeOpCalls("answer", "f", "good")
	waitFor(t, "both failures", func() bool { return e.monitorStatus()["fragile.failed"] == 2 })
	var res monitorStatusRes
	e.ok("/monitors/status", map[string]any{"project_id": "acme/app"}, &res)
	msgs := ""
	for _, er := range res.Monitors[0].Errors {
		msgs += er.Status + ": " + er.Message + "\n"
	}
	if !strings.Contains(msgs, "failed: the judge broken failed") || !strings.Contains(msgs, "unparseable verdict") {
		t.Fatalf("errors = %s; want the upstream failure and the unparseable verdict", msgs)
	}
	if n := len(e.verdicts("wandb.runnable.down")) + len(e.verdicts("wandb.runnable.mumbler")); n != 0 {
		t.Fatalf("%d verdicts stored from failing judges", n)
	}
	// max_attempts 2: the failing upstream was asked in two rounds.
	asked := 0
	for _, r := range up.Requests() {
		if string(r.Body["model"]) == `"fail-503"` {
			asked++
		}
	}
	if asked != 2 {
		t.Fatalf("the failing judge was asked %d times, want 2", asked)
	}
}
