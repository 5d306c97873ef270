package api

import (
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training"
	"github.com/weftdev/weft/training/trajectory"
)

// registerLists adds the reads the web UI pages through: a project's
// models and jobs, and one model.
func (a *API) registerLists(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/preview/models", a.serve(a.listModels))
	mux.HandleFunc("GET /v1/preview/models/{model_id}", a.serve(a.getModel))
	mux.HandleFunc("GET /v1/preview/training-jobs", a.serve(a.listJobs))
}

// projectParam reads the query's entity (default: the key's) and its
// required project.
func projectParam(r *http.Request, p auth.Principal) (string, error) {
	q := r.URL.Query()
	if q.Get("project") == "" {
		return "", &trajectory.Error{Loc: []any{"query", "project"}, Msg: "field required", Type: "missing"}
	}
	return training.ProjectOf(p, q.Get("entity"), q.Get("project"))
}

func modelOf(m storage.TrainingModel) modelAnswer {
	entity, project := training.SplitProject(m.ProjectID)
	return modelAnswer{ID: m.ID, Entity: entity, Project: project, Name: m.Name, BaseModel: m.BaseModel}
}

func (a *API) getModel(r *http.Request, p auth.Principal) (any, error) {
	m, err := a.svc.GetModel(r.Context(), p, r.PathValue("model_id"))
	if err != nil {
		return nil, err
	}
	return modelOf(m), nil
}

func (a *API) listModels(r *http.Request, p auth.Principal) (any, error) {
	projectID, err := projectParam(r, p)
	if err != nil {
		return nil, err
	}
	ms, err := a.svc.ListModels(r.Context(), p, projectID)
	if err != nil {
		return nil, err
	}
	items := make([]modelAnswer, len(ms))
	for i, m := range ms {
		items[i] = modelOf(m)
	}
	return envelope(items, func(m modelAnswer) string { return m.ID }, false), nil
}

// jobItem is a listed job: the job as GET answers it, with its kind, its
// leases so far and the highest step it checkpointed.
type jobItem struct {
	jobAnswer
	Kind           string `json:"kind"`
	Attempts       int    `json:"attempts"`
	CheckpointStep int64  `json:"checkpoint_step"`
}

func (a *API) listJobs(r *http.Request, p auth.Principal) (any, error) {
	projectID, err := projectParam(r, p)
	if err != nil {
		return nil, err
	}
	pg, err := page(r)
	if err != nil {
		return nil, err
	}
	if pg.Descending {
		return nil, &trajectory.Error{Loc: []any{"query", "order"}, Msg: "jobs are listed newest first; leave order out", Type: "literal_error"}
	}
	js, more, err := a.svc.ListJobs(r.Context(), p, storage.TrainingJobPage{ProjectID: projectID,
		ModelID: r.URL.Query().Get("model_id"), AfterID: pg.After, Limit: pg.Limit})
	if err != nil {
		return nil, err
	}
	items := make([]jobItem, len(js))
	for i, j := range js {
		items[i] = jobItem{jobAnswer: jobOf(j), Kind: j.Kind, Attempts: j.Attempts, CheckpointStep: j.CheckpointStep}
	}
	return envelope(items, func(j jobItem) string { return j.ID }, more), nil
}
