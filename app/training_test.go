package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/training/protocol"
)

const baseModel = "OpenPipe/Qwen3-14B-Instruct"

// trainingEnv is an in-process weft with trainable models and a worker key.
type trainingEnv struct {
	*env
	worker string
}

func newTrainingEnv(t *testing.T, mutate ...func(*config.Config)) *trainingEnv {
	t.Helper()
	e := newEnv(t, append([]func(*config.Config){func(c *config.Config) {
		c.Training.BaseModels = []string{baseModel, "Qwen/Qwen3-30B-A3B-Instruct-2507"}
		c.Training.LeaseTTL = 2 * time.Second
	}}, mutate...)...)
	return &trainingEnv{env: e, worker: e.newKey(e.keys, "acme", auth.RoleWorker)}
}

// call sends a request and decodes a JSON answer of the wanted status.
func (e *trainingEnv) call(method, path, key string, body any, want int, v any, hdr ...string) {
	e.t.Helper()
	status, _, out := e.do(method, path, key, body, hdr...)
	if status != want {
		e.t.Fatalf("%s %s = %d %s, want %d", method, path, status, out, want)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, out)
		}
	}
}

func (e *trainingEnv) createModel(project, name string) string {
	e.t.Helper()
	var m struct{ ID string }
	e.call(http.MethodPost, "/v1/preview/models", e.member, map[string]any{"project": project, "name": name,
		"base_model": baseModel, "return_existing": true}, 200, &m)
	return m.ID
}

func groups(rewards ...float64) []map[string]any {
	var ts []map[string]any
	for _, r := range rewards {
		ts = append(ts, map[string]any{"messages_and_choices": []any{map[string]any{"role": "user", "content": "hi"},
			map[string]any{"finish_reason": "stop", "index": 0, "message": map[string]any{"role": "assistant", "content": "yo"}}},
			"reward": r, "metrics": map[string]any{"correct": r > 0.5}})
	}
	return []map[string]any{{"trajectories": ts}}
}

func (e *trainingEnv) createJob(modelID string) string {
	e.t.Helper()
	var j struct{ ID string }
	e.call(http.MethodPost, "/v1/preview/training-jobs", e.member, map[string]any{"model_id": modelID,
		"trajectory_groups": groups(1, 0), "experimental_config": map[string]any{"learning_rate": 1e-5}}, 200, &j)
	return j.ID
}

func (e *trainingEnv) lease(wait float64) (*protocol.Lease, int) {
	e.t.Helper()
	status, _, out := e.do(http.MethodPost, "/v1/worker/lease", e.worker, protocol.LeaseRequest{Worker: "gpu-0", WaitSeconds: wait})
	if status != 200 {
		return nil, status
	}
	var l protocol.Lease
	if err := json.Unmarshal(out, &l); err != nil {
		e.t.Fatal(err)
	}
	return &l, status
}

// TestTrainingRefusesBadRequests: every bad body, id, parameter and key
// gets its own status and a detail that names what to fix.
func TestTrainingRefusesBadRequests(t *testing.T) {
	e := newTrainingEnv(t)
	model := e.createModel("p", "agent")
	job := e.createJob(model)
	evilModel := func() string {
		var m struct{ ID string }
		e.call(http.MethodPost, "/v1/preview/models", e.evil, map[string]any{"project": "p", "name": "x", "base_model": baseModel}, 200, &m)
		return m.ID
	}()
	tests := []struct {
		name, method, path, key string
		body                    any
		status                  int
		want                    string
	}{
		{"no key", "POST", "/v1/preview/models", "", `{}`, 401, `"detail"`},
		{"worker key on the user API", "POST", "/v1/preview/models", e.worker, `{"project":"p","name":"a","base_model":"` + baseModel + `"}`, 403, "worker key"},
		{"body not an object", "POST", "/v1/preview/models", e.member, `[1]`, 422, `"loc":["body"]`},
		{"body not JSON", "POST", "/v1/preview/training-jobs", e.member, `{"model_id":`, 422, `"loc":["body"]`},
		{"project missing", "POST", "/v1/preview/models", e.member, `{"name":"a","base_model":"` + baseModel + `"}`, 422, `"loc":["body","project"]`},
		{"name of the wrong type", "POST", "/v1/preview/models", e.member, `{"project":"p","name":5,"base_model":"x"}`, 422, `"loc":["body","name"]`},
		{"untrainable base model", "POST", "/v1/preview/models", e.member, `{"project":"p","name":"a","base_model":"gpt-2"}`, 400, "use one of OpenPipe/Qwen3-14B-Instruct"},
		{"bad model name", "POST", "/v1/preview/models", e.member, `{"project":"p","name":"a/b","base_model":"` + baseModel + `"}`, 400, "name:"},
		{"taken name", "POST", "/v1/preview/models", e.member, `{"project":"p","name":"agent","base_model":"` + baseModel + `"}`, 409, "return_existing"},
		{"viewer creates", "POST", "/v1/preview/models", e.viewer, `{"project":"p","name":"v","base_model":"` + baseModel + `"}`, 403, "cannot write"},
		{"model id not a uuid", "GET", "/v1/preview/models/nope/checkpoints", e.member, nil, 400, "model_id"},
		{"unknown model", "GET", "/v1/preview/models/" + job + "/checkpoints", e.member, nil, 404, "does not exist"},
		{"another entity's model", "GET", "/v1/preview/models/" + evilModel + "/checkpoints", e.member, nil, 404, "does not exist"},
		{"limit 0", "GET", "/v1/preview/models/" + model + "/checkpoints?limit=0", e.member, nil, 422, `"loc":["query","limit"]`},
		{"limit 101", "GET", "/v1/preview/models/" + model + "/checkpoints?limit=101", e.member, nil, 422, `"loc":["query","limit"]`},
		{"order sideways", "GET", "/v1/preview/models/" + model + "/checkpoints?order=sideways", e.member, nil, 422, `"loc":["query","order"]`},
		{"cursor of nothing", "GET", "/v1/preview/models/" + model + "/checkpoints?after=zz", e.member, nil, 400, "after:"},
		{"delete without steps", "DELETE", "/v1/preview/models/" + model + "/checkpoints", e.member, `{}`, 422, `"loc":["body","steps"]`},
		{"delete steps of text", "DELETE", "/v1/preview/models/" + model + "/checkpoints", e.member, `{"steps":["a"]}`, 422, `"loc":["body","steps"]`},
		{"log without split", "POST", "/v1/preview/models/" + model + "/log", e.member, `{"trajectory_groups":[]}`, 422, `"loc":["body","split"]`},
		{"bad reward", "POST", "/v1/preview/training-jobs", e.member, map[string]any{"model_id": model,
			"trajectory_groups": []any{map[string]any{"trajectories": []any{map[string]any{"reward": "high"}}}}}, 422,
			`"loc":["body","trajectory_groups",0,"trajectories",0,"reward"]`},
		{"no groups", "POST", "/v1/preview/training-jobs", e.member, map[string]any{"model_id": model, "trajectory_groups": []any{}}, 422, "at least one"},
		{"bad experimental_config", "POST", "/v1/preview/training-jobs", e.member, map[string]any{"model_id": model,
			"trajectory_groups": groups(1), "experimental_config": "fast"}, 422, `"loc":["body","experimental_config"]`},
		{"sft data of nothing", "POST", "/v1/preview/sft-training-jobs", e.member, map[string]any{"model_id": model,
			"training_data_url": "wandb-artifact:///acme/p/none:v0"}, 400, "training_data_url"},
		{"sft data not a uri", "POST", "/v1/preview/sft-training-jobs", e.member, map[string]any{"model_id": model,
			"training_data_url": "s3://bucket/x"}, 400, "wandb-artifact"},
		{"job id not a uuid", "GET", "/v1/preview/training-jobs/x", e.member, nil, 400, "training_job_id"},
		{"unknown job", "GET", "/v1/preview/training-jobs/" + model, e.member, nil, 404, "does not exist"},
		{"another entity's job", "GET", "/v1/preview/training-jobs/" + job, e.evil, nil, 404, "does not exist"},
		{"event cursor of nothing", "GET", "/v1/preview/training-jobs/" + job + "/events?after=x", e.member, nil, 400, "after:"},
		{"member leases", "POST", "/v1/worker/lease", e.member, `{"worker":"w"}`, 403, "role worker"},
		{"lease without a name", "POST", "/v1/worker/lease", e.worker, `{}`, 400, "worker"},
		{"lease waits past a duration", "POST", "/v1/worker/lease", e.worker, `{"worker":"w","wait_seconds":9.3e9}`, 400, "wait_seconds"},
		{"lease waits far too long", "POST", "/v1/worker/lease", e.worker, `{"worker":"w","wait_seconds":1e300}`, 400, "wait_seconds"},
		{"lease waits past the protocol's max", "POST", "/v1/worker/lease", e.worker, `{"worker":"w","wait_seconds":601}`, 400, "wait_seconds"},
		{"lease waits less than nothing", "POST", "/v1/worker/lease", e.worker, `{"worker":"w","wait_seconds":-1}`, 400, "wait_seconds"},
		{"heartbeat without a lease", "POST", "/v1/worker/jobs/" + job + "/heartbeat", e.worker, `{}`, 400, protocol.LeaseHeader},
		{"heartbeat under no lease", "POST", "/v1/worker/jobs/" + job + "/heartbeat", e.worker, `{}`, 409, "stop working"},
	}
	for _, tc := range tests {
		hdr := []string{}
		if strings.Contains(tc.name, "under no lease") {
			hdr = []string{protocol.LeaseHeader, "forged"}
		}
		status, _, out := e.do(tc.method, tc.path, tc.key, tc.body, hdr...)
		if status != tc.status || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %s %s = %d %s; want %d with %s", tc.name, tc.method, tc.path, status, out, tc.status, tc.want)
		}
	}
	// No refused request leased the queued job.
	if l, status := e.lease(0); l == nil || l.Job.ID != job {
		t.Errorf("lease after the refusals = %d %+v, want the queued job %s", status, l, job)
	}
}

// TestTrainingHealthNeedsNoKey: /v1/health and /v1/system-check answer
// without a key; the check reports each part.
func TestTrainingHealthNeedsNoKey(t *testing.T) {
	e := newTrainingEnv(t)
	e.call(http.MethodGet, "/v1/health", "", nil, 200, nil)
	var checks map[string]struct {
		Success  bool
		Duration float64
		Error    *string
	}
	e.call(http.MethodGet, "/v1/system-check", "", nil, 200, &checks)
	for _, name := range []string{"api", "database", "job_queue"} {
		if c, ok := checks[name]; !ok || !c.Success || c.Error != nil {
			t.Errorf("check %s = %+v", name, c)
		}
	}
	var models []string
	e.call(http.MethodGet, "/v1/preview/base-models", e.viewer, nil, 200, &models)
	if fmt.Sprint(models) != "["+baseModel+" Qwen/Qwen3-30B-A3B-Instruct-2507]" {
		t.Fatalf("base models = %v", models)
	}
}
