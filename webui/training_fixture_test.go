package webui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

const baseModel = "OpenPipe/Qwen3-14B-Instruct"

// trainingFixture is what ingestTraining made.
type trainingFixture struct {
	model, done, queued string
	hooks               *atomic.Int64 // requests the webhook receiver got
}

// ingestTraining sets up, in acme/app: a webhook to a local receiver and
// an automation firing on checkpoint aliases (^step); a model "agent"
// with two RL jobs, the first run by hand through the worker protocol
// (three events, a checkpoint of step 1, succeeded), the second queued.
func ingestTraining(t testing.TB, w weft) trainingFixture {
	f := trainingFixture{hooks: new(atomic.Int64)}
	rc := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.hooks.Add(1)
	}))
	t.Cleanup(rc.Close)
	var hook, model struct{ ID string }
	decode(t, w.send(t, "POST", "/webhooks/create", w.admin, map[string]any{"entity": "acme", "name": "deploy", "url": rc.URL}), &hook)
	w.send(t, "POST", "/automations/create", w.admin, map[string]any{"project_id": "acme/app", "name": "new checkpoint",
		"scope": map[string]any{"type": "project"}, "event": "ADD_ARTIFACT_ALIAS", "alias_regex": "^step",
		"webhook_id": hook.ID, "enabled": true, "payload": map[string]any{"alias": "${alias}"}})
	decode(t, w.send(t, "POST", "/v1/preview/models", w.key, map[string]any{"project": "app", "name": "agent", "base_model": baseModel}), &model)
	f.model = model.ID
	f.done, f.queued = createJob(t, w, model.ID), createJob(t, w, model.ID)
	runJob(t, w, f.done)
	return f
}

func decode(t testing.TB, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
}

func createJob(t testing.TB, w weft, model string) string {
	traj := map[string]any{"messages_and_choices": []any{map[string]any{"role": "user", "content": "hi"}}, "reward": 1}
	var j struct{ ID string }
	decode(t, w.send(t, "POST", "/v1/preview/training-jobs", w.key, map[string]any{"model_id": model,
		"trajectory_groups": []any{map[string]any{"trajectories": []any{traj}}}}), &j)
	return j.ID
}

// runJob leases job (the oldest queued) and works it as a worker would.
func runJob(t testing.TB, w weft, job string) {
	var l struct {
		LeaseID string `json:"lease_id"`
		Job     struct{ ID string }
	}
	decode(t, w.send(t, "POST", "/v1/worker/lease", w.worker, map[string]any{"worker": "gpu-0", "wait_seconds": 5}), &l)
	if l.Job.ID != job {
		t.Fatalf("leased job %s, want %s", l.Job.ID, job)
	}
	lease := []string{"Weft-Lease", l.LeaseID}
	base := "/v1/worker/jobs/" + job
	w.send(t, "POST", base+"/events", w.worker, map[string]any{"seq": 1, "events": []any{
		map[string]any{"type": "training_started", "data": map[string]any{"num_sequences": 1}},
		map[string]any{"type": "gradient_step", "data": map[string]any{"loss": 0.5}},
		map[string]any{"type": "gradient_step", "data": map[string]any{"loss": 0.25}}}}, lease...)
	var up struct{ Digest string }
	decode(t, w.send(t, "PUT", base+"/files/adapter.bin", w.worker, []byte("weights"), lease...), &up)
	w.send(t, "POST", base+"/checkpoints", w.worker, map[string]any{"step": 1, "metrics": map[string]any{"train/loss": 0.25},
		"files": map[string]any{"adapter.bin": up.Digest}}, lease...)
	w.send(t, "POST", base+"/finish", w.worker, map[string]any{"status": "succeeded"}, lease...)
}
