package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

type artModel struct {
	ID        string  `json:"id"`
	Entity    string  `json:"entity"`
	Project   string  `json:"project"`
	Name      string  `json:"name"`
	BaseModel string  `json:"base_model"`
	RunID     *string `json:"run_id"`
}

type artPage[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

type artCheckpoint struct {
	ID      string             `json:"id"`
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
}

type artEvent struct {
	ID   string                     `json:"id"`
	Type string                     `json:"type"`
	Data map[string]json.RawMessage `json:"data"`
}

// TestARTRequestSequence replays what OpenPipe ART's serverless backend
// sends, twice over (two training steps), against the weft binary with
// `weft trainer` running the example command: register the model,
// read the latest step, log validation trajectories, create a job,
// follow its events to the end as ART's polling loop does, chat with the
// new checkpoint, and delete the checkpoints it would not keep.
func TestARTRequestSequence(t *testing.T) {
	w := startTrainingWeft(t)
	startTrainer(t, w.weft.URL, w.worker, "gpu-0", "--step-delay", "5ms")
	art := newART(t, w.weft.URL, w.member)
	model := art.register("email-agent", "agent-001")
	for step := int64(1); step <= 2; step++ {
		if got := art.latestStep(model.ID); got != step-1 {
			t.Fatalf("latest step before training %d = %d", step, got)
		}
		art.call(http.MethodPost, "/preview/models/"+model.ID+"/log", map[string]any{"model_id": model.ID,
			"trajectory_groups": trajectoryGroups(4), "split": "val"}, nil, http.StatusOK)
		var job struct{ ID string }
		art.call(http.MethodPost, "/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": trajectoryGroups(25),
			"experimental_config": map[string]any{"learning_rate": 1e-5, "precalculate_logprobs": nil, "loss_fn": "cispo"}}, &job, http.StatusOK)
		if steps, total := art.follow(job.ID); steps != 25 || total != 25 {
			t.Fatalf("training %d: %d gradient steps of %d announced, want 25 of 25", step, steps, total)
		}
		var status map[string]any
		art.call(http.MethodGet, "/preview/training-jobs/"+job.ID, nil, &status, http.StatusOK)
		if status["status"] != "succeeded" || status["training_end"] == nil || status["error_message"] != nil {
			t.Fatalf("job after training_ended = %v", status)
		}
		if got := art.latestStep(model.ID); got != step {
			t.Fatalf("latest step after training %d = %d", step, got)
		}
	}
	checkCheckpointChat(t, w, art, model)
	art.deleteCheckpoints(model.ID, "val/reward")
}

func (a *artClient) register(project, name string) artModel {
	a.t.Helper()
	var m, again artModel
	body := map[string]any{"entity": nil, "project": project, "name": name, "base_model": trainBase, "return_existing": true}
	a.call(http.MethodPost, "/preview/models", body, &m, http.StatusOK)
	a.call(http.MethodPost, "/preview/models", body, &again, http.StatusOK)
	if m.ID == "" || again.ID != m.ID || m.Entity != "acme" || m.Project != project || m.Name != name || m.BaseModel != trainBase || m.RunID != nil {
		a.t.Fatalf("register = %+v then %+v", m, again)
	}
	return m
}

// latestStep is ART's _get_step: the first checkpoint of limit=1
// order=desc, 0 without any.
func (a *artClient) latestStep(modelID string) int64 {
	a.t.Helper()
	var page artPage[artCheckpoint]
	a.call(http.MethodGet, "/preview/models/"+modelID+"/checkpoints?limit=1&order=desc", nil, &page, http.StatusOK)
	if page.Object != "list" || len(page.Data) > 1 {
		a.t.Fatalf("latest checkpoint page = %+v", page)
	}
	if len(page.Data) == 0 {
		return 0
	}
	return page.Data[0].Step
}

// follow is ART's polling loop: every poll lists the events after its
// cursor and follows the cursor pages (after = the page's last id) while
// has_more; the loop's own cursor moves past every event but
// training_started. It returns the gradient steps seen and the total
// training_started announced.
func (a *artClient) follow(jobID string) (steps, total int) {
	a.t.Helper()
	after := ""
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		for cursor := after; ; {
			page := a.eventsPage(jobID, cursor)
			for _, ev := range page.Data {
				switch ev.Type {
				case "training_started":
					if err := json.Unmarshal(ev.Data["num_sequences"], &total); err != nil {
						a.t.Fatalf("training_started without num_sequences: %+v", ev)
					}
					continue
				case "gradient_step":
					steps++
					a.checkNumeric(ev)
				case "training_ended":
					return steps, total
				case "training_failed":
					a.t.Fatalf("training failed: %s", ev.Data["error_message"])
				}
				after = ev.ID
			}
			if !page.HasMore || len(page.Data) == 0 {
				break
			}
			cursor = page.LastID
		}
	}
	a.t.Fatalf("job %s did not end in 60s (%d gradient steps seen)", jobID, steps)
	return 0, 0
}

// eventsPage is one page of a job's events after cursor ("": the first).
func (a *artClient) eventsPage(jobID, cursor string) artPage[artEvent] {
	a.t.Helper()
	var page artPage[artEvent]
	path := "/preview/training-jobs/" + jobID + "/events"
	if cursor != "" {
		path += "?after=" + url.QueryEscape(cursor)
	}
	a.call(http.MethodGet, path, nil, &page, http.StatusOK)
	return page
}

// checkNumeric fails unless every value is a number, as ART's float(v)
// needs.
func (a *artClient) checkNumeric(ev artEvent) {
	a.t.Helper()
	for k, v := range ev.Data {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			a.t.Fatalf("gradient_step value %s = %s is no number", k, v)
		}
	}
}

// checkCheckpointChat chats with the checkpoints the way ART's rollouts
// name them, by step and without one (the latest).
func checkCheckpointChat(t *testing.T, w *trainingWeft, art *artClient, m artModel) {
	base := "wandb-artifact:///" + m.Entity + "/" + m.Project + "/" + m.Name
	for _, model := range []string{base + ":step1", base} {
		var answer struct {
			Choices []struct{ Message struct{ Content string } }
		}
		art.call(http.MethodPost, "/chat/completions", map[string]any{"model": model, "temperature": 1,
			"messages": []any{map[string]any{"role": "user", "content": "Where is the offsite?"}}}, &answer, http.StatusOK)
		if len(answer.Choices) != 1 || !strings.Contains(answer.Choices[0].Message.Content, "Where is the offsite?") {
			t.Fatalf("chat with %s = %+v", model, answer)
		}
	}
	var got []string
	for _, r := range w.lora.Requests() {
		got = append(got, string(r.Body["model"]))
	}
	want := []string{`"acme/email-agent/agent-001:step1"`, `"acme/email-agent/agent-001:step2"`}
	if !slices.Equal(got, want) {
		t.Fatalf("the LoRA server was asked for %v, want %v", got, want)
	}
}

// deleteCheckpoints is ART's delete_checkpoints: list every checkpoint
// (all pages), keep the latest and the best by metric, delete the rest.
func (a *artClient) deleteCheckpoints(modelID, metric string) {
	a.t.Helper()
	all := pages[artCheckpoint](a, "/preview/models/"+modelID+"/checkpoints?limit=1")
	if len(all) != 2 || all[0].Step != 1 || all[1].Step != 2 || all[0].Metrics[metric] != 0.59375 || all[1].Metrics["train/loss"] == 0 {
		a.t.Fatalf("checkpoints = %+v", all)
	}
	var del struct {
		DeletedCount  int     `json:"deleted_count"`
		NotFoundSteps []int64 `json:"not_found_steps"`
	}
	a.call(http.MethodDelete, "/preview/models/"+modelID+"/checkpoints", map[string]any{"steps": []int64{1}}, &del, http.StatusOK)
	if del.DeletedCount != 1 || len(del.NotFoundSteps) != 0 || a.latestStep(modelID) != 2 {
		a.t.Fatalf("delete = %+v", del)
	}
}
