package traceapi

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// ProjectStore is what the projects endpoints read.
type ProjectStore interface {
	storage.ProjectLister
	storage.ProjectStatsReader
}

// ProjectsAPI serves /projects/list (the projects of an entity that hold
// data, for pickers), /project/stats (a project's storage use) and
// /service/projects_info (the internal ids of projects).
type ProjectsAPI struct {
	projects ProjectStore
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
}

// NewProjectsAPI builds the projects endpoint over projects; its reads run
// within the Budget WithQueryLimits sets.
func NewProjectsAPI(projects ProjectStore, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *ProjectsAPI {
	return &ProjectsAPI{projects: projects, logger: logger, maxBytes: maxBodyBytes,
		budget: newReadBudget(applyOptions(opts), logger)}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *ProjectsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /projects/list", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.list))))
	mux.Handle("POST /project/stats", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.stats))))
	mux.Handle("POST /service/projects_info", wrap(httpapi.JSON(a.logger, a.maxBytes, a.projectsInfo)))
}

// maxProjectsInfo bounds the projects one /service/projects_info names.
const maxProjectsInfo = 1000

// stats answers /project/stats. Every size is read (each takes
// milliseconds); a size the request leaves out answers 0.
func (a *ProjectsAPI) stats(r *http.Request, body []byte) (any, error) {
	var projectID string
	traces, objects, tables, files := true, true, true, true
	err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID,
		"include_trace_storage_size": &traces, "include_object_storage_size": &objects,
		"include_table_storage_size": &tables, "include_file_storage_size": &files}, "project_id")
	if err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	st, err := a.projects.ProjectStats(r.Context(), projectID)
	if err != nil {
		return nil, err
	}
	pick := func(want bool, n int64) int64 {
		if want {
			return n
		}
		return 0
	}
	return map[string]int64{
		"trace_storage_size_bytes":   pick(traces, st.TraceBytes),
		"objects_storage_size_bytes": pick(objects, st.ObjectBytes),
		"tables_storage_size_bytes":  pick(tables, st.TableBytes),
		"files_storage_size_bytes":   pick(files, st.FileBytes),
	}, nil
}

// projectInfo is one entry of ProjectsInfoRes.
type projectInfo struct {
	External string `json:"external_project_id"`
	Internal string `json:"internal_project_id"`
}

// projectsInfo answers /service/projects_info. Weft stores projects under
// their entity/project name, so the internal id a client hashes refs with
// (client-side digests) is the external one: digests it computes match
// the server's.
func (a *ProjectsAPI) projectsInfo(r *http.Request, body []byte) (any, error) {
	var ids []string
	if err := wire.DecodeTop(body, wire.Fields{"project_ids": &ids}, "project_ids"); err != nil {
		return nil, err
	}
	if len(ids) > maxProjectsInfo {
		return nil, &wire.FieldError{Field: "project_ids", Msg: fmt.Sprintf("names %d projects; send at most %d per request", len(ids), maxProjectsInfo)}
	}
	out := make([]projectInfo, 0, len(ids))
	for _, id := range ids {
		if _, err := httpapi.Authorize(r.Context(), id, auth.Read); err != nil {
			return nil, err
		}
		out = append(out, projectInfo{External: id, Internal: id})
	}
	return out, nil
}

type projectOut struct {
	ProjectID      string     `json:"project_id"`
	CallCount      int64      `json:"call_count"`
	LastCallAt     *wire.Time `json:"last_call_at"` // null without calls
	ObjectCount    int64      `json:"object_count"`
	TableCount     int64      `json:"table_count"`
	FeedbackCount  int64      `json:"feedback_count"`
	LastActivityAt wire.Time  `json:"last_activity_at"`
}

func projectOf(f storage.ProjectSummary) projectOut {
	out := projectOut{ProjectID: f.ProjectID, CallCount: f.CallCount, ObjectCount: f.ObjectCount, TableCount: f.TableCount,
		FeedbackCount: f.FeedbackCount, LastActivityAt: wire.Time{Time: f.LastActivityAt}}
	if !f.LastCallAt.IsZero() {
		out.LastCallAt = &wire.Time{Time: f.LastCallAt}
	}
	return out
}

func (a *ProjectsAPI) list(r *http.Request, body []byte) (any, error) {
	var entity string
	if err := wire.DecodeTop(body, wire.Fields{"entity": &entity}, "entity"); err != nil {
		return nil, err
	}
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok {
		return nil, auth.ErrUnauthenticated
	}
	if err := p.AuthorizeEntity(entity, auth.Read); err != nil {
		return nil, err
	}
	found, err := a.projects.ListProjects(r.Context(), entity)
	if err != nil {
		return nil, err
	}
	out := make([]projectOut, len(found))
	for i, f := range found {
		out[i] = projectOf(f)
	}
	return map[string]any{"projects": out}, nil
}
