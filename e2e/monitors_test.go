package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// monitorsConfig is a weft config with a slow, priced judge on the fake
// upstream and monitors that look at their queue often.
func monitorsConfig(t *testing.T, upstream string) string {
	t.Helper()
	cfg := fmt.Sprintf(`
inference:
  providers:
    - {name: local, base_url: %q, api_key_env: WEFT_E2E_LLM_KEY}
  models:
    - id: judge
      upstreams: [{provider: local, model: slow-judge}]
      prices: {input_per_million: 1, output_per_million: 1}
monitors:
  interval: 50ms
  refresh_interval: 100ms
  workers: 2
`, upstream)
	path := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMonitorSurvivesSIGKILL: a monitor scoring stored calls is killed
// part way; after a restart on the same data directory every call has
// exactly one verdict, and the judge was asked again only for the calls
// it was answering when the process died.
func TestMonitorSurvivesSIGKILL(t *testing.T) {
	up := upstreamtest.New(upstreamtest.Options{Delay: 100 * time.Millisecond})
	t.Cleanup(up.Close)
	t.Setenv("WEFT_E2E_LLM_KEY", "sk-e2e-upstream")
	dir, cfg := t.TempDir(), monitorsConfig(t, up.BaseURL())
	p := startWeft(t, dir, "--config", cfg)
	c := newClient(t, p.URL, p.AdminKey)
	const project = "acme/mon"
	var judge struct{ Digest string }
	c.mustPost("/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": "grader", "val": map[string]any{
		"_type": "LLMAsAJudgeScorer", "_class_name": "LLMAsAJudgeScorer", "_bases": []string{"Scorer", "Object", "BaseModel"},
		"name": "grader", "scoring_prompt": "Grade this answer: {output} to {inputs}",
		"model": map[string]any{"_class_name": "LLMStructuredCompletionModel", "llm_model_id": "judge",
			"default_params": map[string]any{"response_format": "json"}}}}}, &judge)
	c.mustPost("/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": "live", "val": map[string]any{
		"_type": "Monitor", "_class_name": "Monitor", "_bases": []string{"Object", "BaseModel"}, "name": "live",
		"sampling_rate": 1, "op_names": []string{}, "query": nil, "active": true,
		"scorers": []string{"weave:///" + project + "/object/grader:" + judge.Digest}}}}, nil)
	time.Sleep(300 * time.Millisecond) // the registry reads the monitor

	const n = 30
	ids, body := upsertBody(project, "m", n)
	if status, err := c.tryPost("/call/upsert_batch", body); err != nil || status != 200 {
		t.Fatalf("upsert_batch = %d, %v", status, err)
	}
	verdicts := func(c *client) map[string]int {
		var res struct{ Result []map[string]any }
		c.mustPost("/feedback/query", map[string]any{"project_id": project, "limit": 1000,
			"query": map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": "feedback_type"},
				map[string]any{"$literal": "wandb.runnable.grader"}}}}}, &res)
		out := map[string]int{}
		for _, r := range res.Result {
			out[strings.TrimPrefix(r["weave_ref"].(string), "weave:///"+project+"/call/")]++
		}
		return out
	}
	eventually(t, func() bool { return len(verdicts(c)) >= 4 })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	askedBefore := up.Served()
	if askedBefore >= n {
		t.Fatalf("the judge answered all %d calls before the kill; the test proves nothing", askedBefore)
	}

	p2 := startWeft(t, dir, "--config", cfg)
	c2 := newClient(t, p2.URL, p2.AdminKey)
	// The new process takes the monitors lease once the dead one's ends
	// (5s at the least), then scores what the queue kept.
	for deadline := time.Now().Add(60 * time.Second); len(verdicts(c2)) < n; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d calls have a verdict a minute after the restart", len(verdicts(c2)), n)
		}
	}
	time.Sleep(500 * time.Millisecond)
	got := verdicts(c2)
	for _, id := range ids {
		if got[id] != 1 {
			t.Fatalf("call %s has %d verdicts after the restart, want 1", id, got[id])
		}
	}
	// The calls in flight at the kill (at most the two workers') are the
	// only ones asked twice.
	if asked := up.Served(); asked > n+2 {
		t.Fatalf("the judge answered %d times for %d calls; only the 2 in flight at the kill may be asked again", asked, n)
	}
	var status struct {
		Monitors []struct{ Scored int64 }
	}
	c2.mustPost("/monitors/status", map[string]any{"project_id": project}, &status)
	if len(status.Monitors) != 1 || status.Monitors[0].Scored != n {
		t.Fatalf("status = %+v, want %d scored", status, n)
	}
	t.Logf("%d judge answers before the kill, %d in all for %d calls", askedBefore, up.Served(), n)
}
