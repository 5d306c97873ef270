package traceapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/monitors"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// maxMonitorErrors bounds the recent failures one status lists per
// monitor; maxMonitorFailuresRead the failures read per project.
const (
	maxMonitorErrors       = 10
	maxMonitorFailuresRead = 200
)

// MonitorsStore is what the monitors' status reads.
type MonitorsStore interface {
	QueryObjects(ctx context.Context, req storage.ObjQueryReq) (storage.ObjQueryRes, error)
	MonitorStats(ctx context.Context, projectID string, since time.Time) ([]storage.MonitorStats, error)
	MonitorFailures(ctx context.Context, projectID string, limit int) ([]storage.MonitorResult, error)
}

// MonitorsAPI serves POST /monitors/status: each of a project's monitors
// (active or not) with what its scorers did today and its recent
// failures, so a judge that fails is seen, not lost.
type MonitorsAPI struct {
	store    MonitorsStore
	defCap   float64
	logger   *slog.Logger
	maxBytes int64
	budget   *readBudget
	now      func() time.Time
}

// NewMonitorsAPI builds the endpoint; defaultCap is the daily spend cap
// of a monitor that sets none.
func NewMonitorsAPI(store MonitorsStore, defaultCap float64, maxBodyBytes int64, logger *slog.Logger, opts ...Option) *MonitorsAPI {
	return &MonitorsAPI{store: store, defCap: defaultCap, logger: logger, maxBytes: maxBodyBytes,
		budget: newReadBudget(applyOptions(opts), logger), now: time.Now}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *MonitorsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /monitors/status", wrap(httpapi.JSON(a.logger, a.maxBytes, a.budget.json(a.status))))
}

type monitorError struct {
	CallID    string    `json:"call_id"`
	ScorerRef string    `json:"scorer_ref"`
	Status    string    `json:"status"`
	At        time.Time `json:"at"`
	Message   string    `json:"message"`
}

type monitorStatus struct {
	MonitorRef   string         `json:"monitor_ref"`
	Name         string         `json:"name"`
	Active       bool           `json:"active"`
	SamplingRate float64        `json:"sampling_rate"`
	Scorers      []string       `json:"scorers"`
	OpNames      []string       `json:"op_names"`
	DailyCapUSD  float64        `json:"daily_spend_cap_usd"`
	SpendToday   float64        `json:"spend_today_usd"`
	Scored       int64          `json:"scored"`
	Failed       int64          `json:"failed"`
	Skipped      int64          `json:"skipped"`
	LastScoredAt *time.Time     `json:"last_scored_at"`
	Invalid      string         `json:"invalid,omitempty"`
	Errors       []monitorError `json:"errors"`
}

func (a *MonitorsAPI) status(r *http.Request, body []byte) (any, error) {
	var projectID string
	if err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID}, "project_id"); err != nil {
		return nil, err
	}
	if _, err := httpapi.Authorize(r.Context(), projectID, auth.Read); err != nil {
		return nil, err
	}
	ctx := r.Context()
	limit := int64(monitors.MaxMonitorsPerProject)
	objs, err := a.store.QueryObjects(ctx, storage.ObjQueryReq{ProjectID: projectID, Limit: &limit,
		Filter: &storage.ObjectVersionFilter{BaseObjectClasses: []string{monitors.MonitorClass}, LatestOnly: true}})
	if err != nil {
		return nil, err
	}
	today := a.now().UTC().Truncate(24 * time.Hour)
	stats, err := a.store.MonitorStats(ctx, projectID, today)
	if err != nil {
		return nil, err
	}
	fails, err := a.store.MonitorFailures(ctx, projectID, maxMonitorFailuresRead)
	if err != nil {
		return nil, err
	}
	byName := map[string]storage.MonitorStats{}
	for _, st := range stats {
		byName[st.Monitor] = st
	}
	out := make([]monitorStatus, 0, len(objs.Objs))
	for _, o := range objs.Objs {
		m, perr := monitors.ParseMonitor(projectID, o.ObjectID, o.Digest, o.Val)
		st := byName[o.ObjectID]
		ms := monitorStatus{MonitorRef: m.Ref, Name: o.ObjectID, Active: m.Active, SamplingRate: m.SamplingRate,
			Scorers: nonNil(m.Scorers), OpNames: nonNil(m.OpNames), DailyCapUSD: a.defCap, SpendToday: st.CostUSD,
			Scored: st.Scored, Failed: st.Failed, Skipped: st.Skipped, LastScoredAt: st.LastAt, Errors: []monitorError{}}
		if m.DailyCapUSD != nil {
			ms.DailyCapUSD = *m.DailyCapUSD
		}
		if perr != nil {
			ms.Invalid = perr.Error()
		}
		for _, f := range fails {
			if f.Monitor == o.ObjectID && len(ms.Errors) < maxMonitorErrors {
				ms.Errors = append(ms.Errors, monitorError{CallID: f.CallID, ScorerRef: f.ScorerRef, Status: f.Status, At: f.At, Message: f.Message})
			}
		}
		out = append(out, ms)
	}
	return map[string]any{"monitors": out}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
