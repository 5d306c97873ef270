package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/upstreamtest"
	"github.com/weftdev/weft/training/protocol"
)

// loraEnv is a training env whose gateway sends checkpoints to a fake
// LoRA server and whose automations may call loopback receivers.
func loraEnv(t *testing.T) (*trainingEnv, *upstreamtest.Server) {
	lora := upstreamtest.New(upstreamtest.Options{Record: true})
	t.Cleanup(lora.Close)
	e := newTrainingEnv(t, func(c *config.Config) {
		c.Inference.Providers = []catalog.ProviderConfig{{Name: "lora", BaseURL: lora.BaseURL()}}
		c.Inference.LoRA.Upstreams = []catalog.UpstreamConfig{{Provider: "lora"}}
		c.Automations.AllowedNetworks = []string{"127.0.0.0/8"}
		c.Automations.PollInterval = 50 * time.Millisecond
	})
	return e, lora
}

// TestTrainingJobFromLeaseToChat runs one job by hand through the worker
// protocol and checks what every other party sees: the client's job and
// events, the checkpoint and its metrics, the automation fired by the
// checkpoint's alias, and chat with the checkpoint.
func TestTrainingJobFromLeaseToChat(t *testing.T) {
	e, lora := loraEnv(t)
	hooks := newHookReceiver(t, always(200))
	var hook struct{ ID string }
	e.as(e.admin, "/webhooks/create", map[string]any{"entity": "acme", "name": "deploy", "url": hooks.srv.URL}, &hook)
	e.as(e.admin, "/automations/create", map[string]any{"project_id": "acme/p", "name": "new checkpoint", "scope": map[string]any{"type": "project"},
		"event": "ADD_ARTIFACT_ALIAS", "alias_regex": "^step", "webhook_id": hook.ID, "enabled": true,
		"payload": map[string]any{"alias": "${alias}", "step": "${artifact_metadata.step}", "collection": "${artifact_collection_name}"}}, nil)
	model := e.createModel("p", "agent")
	job := e.createJob(model)
	lease := runJobByHand(e, job)
	if got := hooks.wait(t, 1); !strings.Contains(string(got[0].body), `"alias":"step1"`) || !strings.Contains(string(got[0].body), `"collection":"agent"`) {
		t.Fatalf("automation payload = %s", got[0].body)
	}
	checkEventsPaged(e, job)
	var j map[string]any
	e.call(http.MethodGet, "/v1/preview/training-jobs/"+job, e.viewer, nil, 200, &j)
	if j["status"] != "succeeded" || j["training_start"] == nil || j["training_end"] == nil || j["error_message"] != nil || j["model_id"] != model {
		t.Fatalf("job = %v", j)
	}
	e.call(http.MethodPost, "/v1/preview/models/"+model+"/log", e.member, map[string]any{"model_id": model, "split": "val",
		"trajectory_groups": groups(1, 0, 1, 1), "extra": true}, 200, nil)
	var page struct {
		Data []struct {
			Step    int64
			Metrics map[string]float64
		}
		HasMore bool `json:"has_more"`
	}
	e.call(http.MethodGet, "/v1/preview/models/"+model+"/checkpoints?limit=1&order=desc", e.member, nil, 200, &page)
	m := page.Data[0].Metrics
	if len(page.Data) != 1 || page.Data[0].Step != 1 || m["val/reward"] != 0.75 || m["val/num_trajectories"] != 4 || m["val/correct"] != 0.75 || m["train/loss"] != 0.25 {
		t.Fatalf("latest checkpoint = %+v", page)
	}
	checkChat(t, e, lora, model)
	finishTwice(e, job, lease)
}

// runJobByHand leases the job and works it as a worker would.
func runJobByHand(e *trainingEnv, job string) string {
	e.t.Helper()
	l, status := e.lease(5)
	if status != 200 || l.Job.ID != job || l.Job.TargetStep != 1 || l.PreviousCheckpoint != nil || l.Job.Attempt != 1 ||
		l.Model.Entity != "acme" || l.Model.Name != "agent" || !strings.Contains(string(l.Input), `"learning_rate":`) {
		e.t.Fatalf("lease = %d %+v", status, l)
	}
	h := []string{protocol.LeaseHeader, l.LeaseID}
	var hb protocol.HeartbeatAnswer
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/heartbeat", e.worker, `{}`, 200, &hb, h...)
	batch := protocol.Events{Seq: 1, Events: []protocol.Event{{Type: "training_started", Data: json.RawMessage(`{"num_sequences":2}`)},
		{Type: "gradient_step", Data: json.RawMessage(`{"loss":0.5,"grad_norm":1}`)}, {Type: "gradient_step", Data: json.RawMessage(`{"loss":0.25}`)}}}
	var appended struct{ Appended int }
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/events", e.worker, batch, 200, &appended, h...)
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/events", e.worker, batch, 200, &appended, h...)
	if appended.Appended != 0 {
		e.t.Fatalf("a batch sent again appended %d events", appended.Appended)
	}
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/events", e.worker, protocol.Events{Seq: 4, Events: []protocol.Event{
		{Type: "gradient_step", Data: json.RawMessage(`{"loss":"low"}`)}}}, 422, nil, h...)
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/finish", e.worker, protocol.Finish{Status: "succeeded"}, 409, nil, h...)
	var up protocol.Uploaded
	e.call(http.MethodPut, "/v1/worker/jobs/"+job+"/files/adapter/adapter_model.bin", e.worker, "weights", 200, &up, h...)
	var cp protocol.Checkpoint
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/checkpoints", e.worker, protocol.CheckpointRegistration{Step: 1,
		Metrics: map[string]float64{"train/loss": 0.25}, Files: map[string]string{"adapter/adapter_model.bin": up.Digest}}, 200, &cp, h...)
	if cp.Artifact != "acme/p/agent:step1" || cp.Files["adapter/adapter_model.bin"].Size != 7 {
		e.t.Fatalf("checkpoint = %+v", cp)
	}
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/finish", e.worker, protocol.Finish{Status: "succeeded"}, 200, nil, h...)
	return l.LeaseID
}

// checkEventsPaged pages through the events two at a time, as openai's
// cursor page does, past the end.
func checkEventsPaged(e *trainingEnv, job string) {
	e.t.Helper()
	var types []string
	after := ""
	for range 5 {
		var page struct {
			Data []struct {
				ID, Type string
				Data     map[string]any
			}
			LastID  string `json:"last_id"`
			HasMore bool   `json:"has_more"`
		}
		e.call(http.MethodGet, "/v1/preview/training-jobs/"+job+"/events?limit=2&after="+after, e.viewer, nil, 200, &page)
		for _, ev := range page.Data {
			types = append(types, ev.Type)
		}
		if !page.HasMore {
			if len(page.Data) > 0 {
				after = page.LastID
				continue
			}
			break
		}
		after = page.LastID
	}
	if strings.Join(types, ",") != "training_started,gradient_step,gradient_step,training_ended" {
		e.t.Fatalf("events = %v", types)
	}
}

// checkChat chats with the checkpoint by step and by latest, and is
// refused for unknown aliases and other tenants.
func checkChat(t *testing.T, e *trainingEnv, lora *upstreamtest.Server, model string) {
	for _, alias := range []string{"step1", "latest"} {
		status, _, out := e.do(http.MethodPost, "/v1/chat/completions", e.member, map[string]any{
			"model": "wandb-artifact:///acme/p/agent:" + alias, "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			"Authorization", "Bearer "+e.member)
		if status != 200 || !strings.Contains(string(out), "echo: hi") {
			t.Fatalf("chat with %s = %d %s", alias, status, out)
		}
	}
	reqs := lora.Requests()
	if len(reqs) != 2 || string(reqs[0].Body["model"]) != `"acme/p/agent:step1"` || string(reqs[1].Body["model"]) != `"acme/p/agent:step1"` {
		t.Fatalf("the LoRA server got %d requests, first for %s", len(reqs), reqs[0].Body["model"])
	}
	for _, tc := range []struct {
		key, model string
		status     int
	}{{e.member, "wandb-artifact:///acme/p/agent:step9", 404}, {e.evil, "wandb-artifact:///acme/p/agent:step1", 401},
		{e.member, "wandb-artifact:///acme/p", 400}} {
		status, _, out := e.do(http.MethodPost, "/v1/chat/completions", tc.key, map[string]any{"model": tc.model,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		if status != tc.status {
			t.Errorf("chat %s = %d %s, want %d", tc.model, status, out, tc.status)
		}
	}
	var del struct {
		DeletedCount  int     `json:"deleted_count"`
		NotFoundSteps []int64 `json:"not_found_steps"`
	}
	e.call(http.MethodDelete, "/v1/preview/models/"+model+"/checkpoints", e.member, map[string]any{"steps": []int{1, 7}}, 200, &del)
	if del.DeletedCount != 1 || len(del.NotFoundSteps) != 1 || del.NotFoundSteps[0] != 7 {
		t.Fatalf("delete = %+v", del)
	}
	status, _, _ := e.do(http.MethodPost, "/v1/chat/completions", e.member, map[string]any{"model": "wandb-artifact:///acme/p/agent:step1",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	if status != 404 {
		t.Fatalf("chat with a deleted checkpoint = %d", status)
	}
}

// finishTwice: the same finish again answers the same; another is refused.
func finishTwice(e *trainingEnv, job, lease string) {
	e.t.Helper()
	h := []string{protocol.LeaseHeader, lease}
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/finish", e.worker, protocol.Finish{Status: "succeeded"}, 200, nil, h...)
	e.call(http.MethodPost, "/v1/worker/jobs/"+job+"/finish", e.worker, protocol.Finish{Status: "failed", ErrorMessage: "x"}, 409, nil, h...)
	e.call(http.MethodPost, "/v1/preview/training-jobs/"+job+"/cancel", e.member, nil, 409, nil)
}
