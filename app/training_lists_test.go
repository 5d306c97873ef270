package app_test

import (
	"net/http"
	"strings"
	"testing"
)

type listedJob struct {
	ID, Status, Kind string
	ModelID          string `json:"model_id"`
}

type jobList struct {
	Data    []listedJob
	LastID  string `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

// TestTrainingListsAProjectsModelsAndJobs: a viewer of the entity lists
// a project's models by name and its jobs newest first, page by page or
// of one model; another entity's key, a worker key and bad parameters
// are refused with the parameter named.
func TestTrainingListsAProjectsModelsAndJobs(t *testing.T) {
	e := newTrainingEnv(t)
	agent, bot := e.createModel("p", "agent"), e.createModel("p", "bot")
	e.createModel("q", "other")
	first, second, third := e.createJob(agent), e.createJob(bot), e.createJob(agent)
	var models struct {
		Data []struct{ ID, Name, Project, BaseModel string }
	}
	e.call(http.MethodGet, "/v1/preview/models?project=p", e.viewer, nil, 200, &models)
	if len(models.Data) != 2 || models.Data[0].Name != "agent" || models.Data[1].ID != bot || models.Data[0].Project != "p" {
		t.Fatalf("models of p = %+v, want agent and bot", models.Data)
	}
	var one struct{ Name, Entity string }
	e.call(http.MethodGet, "/v1/preview/models/"+bot, e.viewer, nil, 200, &one)
	if one.Name != "bot" || one.Entity != "acme" {
		t.Fatalf("model %s = %+v", bot, one)
	}
	var page jobList
	e.call(http.MethodGet, "/v1/preview/training-jobs?entity=acme&project=p&limit=2", e.viewer, nil, 200, &page)
	if len(page.Data) != 2 || page.Data[0].ID != third || page.Data[1].ID != second || !page.HasMore ||
		page.Data[0].Status != "queued" || page.Data[0].Kind != "rl" {
		t.Fatalf("first page = %+v, want %s then %s, more to come", page, third, second)
	}
	e.call(http.MethodGet, "/v1/preview/training-jobs?project=p&limit=2&after="+page.LastID, e.viewer, nil, 200, &page)
	if len(page.Data) != 1 || page.Data[0].ID != first || page.HasMore {
		t.Fatalf("second page = %+v, want %s alone", page, first)
	}
	e.call(http.MethodGet, "/v1/preview/training-jobs?project=p&model_id="+bot, e.viewer, nil, 200, &page)
	if len(page.Data) != 1 || page.Data[0].ModelID != bot {
		t.Fatalf("jobs of bot = %+v", page.Data)
	}
	for _, tc := range []struct {
		name, path, key string
		status          int
		want            string
	}{
		{"no project", "/v1/preview/training-jobs", e.viewer, 422, `"loc":["query","project"]`},
		{"no project for models", "/v1/preview/models", e.viewer, 422, `"loc":["query","project"]`},
		{"another entity", "/v1/preview/models?entity=acme&project=p", e.evil, 403, "not a member"},
		{"another entity's jobs", "/v1/preview/training-jobs?entity=acme&project=p", e.evil, 403, "not a member"},
		{"worker key", "/v1/preview/training-jobs?project=p", e.worker, 403, "worker key"},
		{"model id not a uuid", "/v1/preview/training-jobs?project=p&model_id=x", e.viewer, 400, "model_id"},
		{"cursor not a uuid", "/v1/preview/training-jobs?project=p&after=x", e.viewer, 400, "after"},
		{"cursor of another project", "/v1/preview/training-jobs?project=q&after=" + first, e.viewer, 400, "after:"},
		{"bad limit", "/v1/preview/training-jobs?project=p&limit=500", e.viewer, 422, `"loc":["query","limit"]`},
		{"project with a slash", "/v1/preview/models?project=a/b", e.viewer, 400, "project"},
		{"another entity's model", "/v1/preview/models/" + agent, e.evil, 404, "does not exist"},
	} {
		status, _, out := e.do(http.MethodGet, tc.path, tc.key, nil)
		if status != tc.status || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: GET %s = %d %s; want %d with %s", tc.name, tc.path, status, out, tc.status, tc.want)
		}
	}
}
