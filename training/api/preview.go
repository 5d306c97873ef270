package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training"
	"github.com/weftdev/weft/training/trajectory"
)

func (a *API) registerPreview(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/preview/base-models", a.serve(a.baseModels))
	mux.HandleFunc("POST /v1/preview/models", a.serve(a.createModel))
	mux.HandleFunc("DELETE /v1/preview/models/{model_id}", a.serve(a.deleteModel))
	mux.HandleFunc("GET /v1/preview/models/{model_id}/checkpoints", a.serve(a.listCheckpoints))
	mux.HandleFunc("DELETE /v1/preview/models/{model_id}/checkpoints", a.serve(a.deleteCheckpoints))
	mux.HandleFunc("POST /v1/preview/models/{model_id}/log", a.serve(a.log))
	mux.HandleFunc("POST /v1/preview/training-jobs", a.serve(a.createJob))
	mux.HandleFunc("POST /v1/preview/sft-training-jobs", a.serve(a.createSFTJob))
	mux.HandleFunc("GET /v1/preview/training-jobs/{training_job_id}", a.serve(a.getJob))
	mux.HandleFunc("GET /v1/preview/training-jobs/{training_job_id}/events", a.serve(a.listEvents))
	mux.HandleFunc("POST /v1/preview/training-jobs/{training_job_id}/cancel", a.serve(a.cancelJob))
}

func (a *API) baseModels(_ *http.Request, p auth.Principal) (any, error) { return a.svc.BaseModels(p) }

type modelAnswer struct {
	ID        string  `json:"id"`
	Entity    string  `json:"entity"`
	Project   string  `json:"project"`
	Name      string  `json:"name"`
	BaseModel string  `json:"base_model"`
	RunID     *string `json:"run_id"`
}

func (a *API) createModel(r *http.Request, p auth.Principal) (any, error) {
	b, err := a.readBody(r)
	if err != nil {
		return nil, err
	}
	var req training.ModelCreate
	for _, f := range []struct {
		name     string
		v        any
		required bool
		want     string
	}{{"entity", &req.Entity, false, "a string or null"}, {"project", &req.Project, true, "a string"},
		{"name", &req.Name, true, "a string"}, {"base_model", &req.BaseModel, true, "a string"},
		{"return_existing", &req.ReturnExisting, false, "true or false"}} {
		if err := b.field(f.name, f.v, f.required, f.want); err != nil {
			return nil, err
		}
	}
	m, err := a.svc.CreateModel(r.Context(), p, req)
	if err != nil {
		return nil, err
	}
	entity, project := training.SplitProject(m.ProjectID)
	return modelAnswer{ID: m.ID, Entity: entity, Project: project, Name: m.Name, BaseModel: m.BaseModel}, nil
}

func (a *API) deleteModel(r *http.Request, p auth.Principal) (any, error) {
	d, err := a.svc.DeleteModel(r.Context(), p, r.PathValue("model_id"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"model_id": d.ModelID, "deleted_checkpoints": d.DeletedCheckpoints, "deleted_run": false}, nil
}

// page reads the list parameters: after, limit (1-100, default 20) and
// order (asc or desc, default asc).
func page(r *http.Request) (training.Page, error) {
	q := r.URL.Query()
	pg := training.Page{After: q.Get("after"), Limit: 20}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return pg, &trajectory.Error{Loc: []any{"query", "limit"}, Msg: "must be a whole number from 1 to 100", Type: "int_parsing"}
		}
		pg.Limit = n
	}
	switch q.Get("order") {
	case "", "asc":
	case "desc":
		pg.Descending = true
	default:
		return pg, &trajectory.Error{Loc: []any{"query", "order"}, Msg: "must be asc or desc", Type: "literal_error"}
	}
	return pg, nil
}

// listPage is the list envelope the reference's clients page through.
type listPage struct {
	Object  string `json:"object"`
	Data    any    `json:"data"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

func envelope[T any](items []T, id func(T) string, more bool) listPage {
	pg := listPage{Object: "list", Data: items, HasMore: more}
	if len(items) > 0 {
		pg.FirstID, pg.LastID = id(items[0]), id(items[len(items)-1])
	}
	return pg
}

type checkpointItem struct {
	ID      string             `json:"id"`
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
}

func (a *API) listCheckpoints(r *http.Request, p auth.Principal) (any, error) {
	pg, err := page(r)
	if err != nil {
		return nil, err
	}
	cs, more, err := a.svc.ListCheckpoints(r.Context(), p, r.PathValue("model_id"), pg)
	if err != nil {
		return nil, err
	}
	items := make([]checkpointItem, len(cs))
	for i, c := range cs {
		items[i] = checkpointItem{ID: c.ID, Step: c.Step, Metrics: c.Metrics}
	}
	return envelope(items, func(c checkpointItem) string { return c.ID }, more), nil
}

func (a *API) deleteCheckpoints(r *http.Request, p auth.Principal) (any, error) {
	b, err := a.readBody(r)
	if err != nil {
		return nil, err
	}
	var steps []int64
	if err := b.field("steps", &steps, true, "a list of whole numbers"); err != nil {
		return nil, err
	}
	d, err := a.svc.DeleteCheckpoints(r.Context(), p, r.PathValue("model_id"), steps)
	if err != nil {
		return nil, err
	}
	return map[string]any{"deleted_count": d.DeletedCount, "not_found_steps": d.NotFoundSteps}, nil
}

func (a *API) log(r *http.Request, p auth.Principal) (any, error) {
	b, err := a.readBody(r)
	if err != nil {
		return nil, err
	}
	var split string
	if err := b.field("split", &split, true, "a string such as train or val"); err != nil {
		return nil, err
	}
	if err := a.svc.Log(r.Context(), p, r.PathValue("model_id"), split, b["trajectory_groups"]); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

func (a *API) createJob(r *http.Request, p auth.Principal) (any, error) {
	b, err := a.readBody(r)
	if err != nil {
		return nil, err
	}
	var modelID string
	if err := b.field("model_id", &modelID, true, "the model's id"); err != nil {
		return nil, err
	}
	id, err := a.svc.CreateJob(r.Context(), p, modelID, b["trajectory_groups"], b["experimental_config"])
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": id}, nil
}

func (a *API) createSFTJob(r *http.Request, p auth.Principal) (any, error) {
	b, err := a.readBody(r)
	if err != nil {
		return nil, err
	}
	req := training.SFTJob{Config: b["config"], Experimental: b["experimental_config"]}
	if err := b.field("model_id", &req.ModelID, true, "the model's id"); err != nil {
		return nil, err
	}
	if err := b.field("training_data_url", &req.TrainingDataURL, true, "a wandb-artifact:/// URI"); err != nil {
		return nil, err
	}
	id, err := a.svc.CreateSFTJob(r.Context(), p, req)
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": id}, nil
}

type jobAnswer struct {
	ID            string     `json:"id"`
	ModelID       string     `json:"model_id"`
	Status        string     `json:"status"`
	CreatedAt     time.Time  `json:"created_at"`
	TrainingStart *time.Time `json:"training_start"`
	TrainingEnd   *time.Time `json:"training_end"`
	ErrorMessage  *string    `json:"error_message"`
}

func jobOf(j storage.TrainingJob) jobAnswer {
	out := jobAnswer{ID: j.ID, ModelID: j.ModelID, Status: j.Status, CreatedAt: j.CreatedAt, TrainingStart: j.TrainingStart,
		TrainingEnd: j.TrainingEnd}
	if j.ErrorMessage != "" {
		out.ErrorMessage = &j.ErrorMessage
	}
	return out
}

func (a *API) getJob(r *http.Request, p auth.Principal) (any, error) {
	j, err := a.svc.GetJob(r.Context(), p, r.PathValue("training_job_id"))
	if err != nil {
		return nil, err
	}
	return jobOf(j), nil
}

func (a *API) cancelJob(r *http.Request, p auth.Principal) (any, error) {
	j, err := a.svc.CancelJob(r.Context(), p, r.PathValue("training_job_id"))
	if err != nil {
		return nil, err
	}
	return jobOf(j), nil
}

type eventItem struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (a *API) listEvents(r *http.Request, p auth.Principal) (any, error) {
	pg, err := page(r)
	if err != nil {
		return nil, err
	}
	evs, more, err := a.svc.Events(r.Context(), p, r.PathValue("training_job_id"), pg.After, pg.Limit)
	if err != nil {
		return nil, err
	}
	items := make([]eventItem, len(evs))
	for i, e := range evs {
		items[i] = eventItem{ID: e.ID, Type: e.Type, Data: e.Data}
	}
	return envelope(items, func(e eventItem) string { return e.ID }, more), nil
}
