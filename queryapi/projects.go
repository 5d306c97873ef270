package queryapi

import (
	"log/slog"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// ProjectsAPI serves /projects/list: the projects of an entity that hold
// data (calls, objects, tables or feedback), for pickers.
type ProjectsAPI struct {
	projects storage.ProjectLister
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
}

// NewProjectsAPI builds the projects endpoint over projects; its reads run
// within the Budget WithQueryLimits sets.
func NewProjectsAPI(projects storage.ProjectLister, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *ProjectsAPI {
	return &ProjectsAPI{projects: projects, logger: logger, maxBytes: maxBodyBytes,
		budget: newReadBudget(applyOptions(opts), logger)}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *ProjectsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /projects/list", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.list))))
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
