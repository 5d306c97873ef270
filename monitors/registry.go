package monitors

import (
	"context"
	"fmt"
	"go.opentelemetry.io/collector/component"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/storage"
)

// MaxMonitorProjects bounds the projects with monitors a deployment
// follows; MaxMonitorsPerProject the monitors read per project.
const (
	MaxMonitorProjects    = 10_000
	MaxMonitorsPerProject = 100
)

// RegistryStore is what the registry reads.
type RegistryStore interface {
	ProjectsWithObjectClass(ctx context.Context, baseClass string, limit int) ([]string, error)
	QueryObjects(ctx context.Context, req storage.ObjQueryReq) (storage.ObjQueryRes, error)
}

// Registry knows each project's active monitors, read from the store
// every refresh interval (and at once after Nudge), so that the write
// path asks memory, not the store, whether a call is watched.
type Registry struct {
	store    RegistryStore
	interval time.Duration
	logger   *slog.Logger

	active atomic.Pointer[map[string][]Monitor] // project -> its active monitors
	// refreshing serializes refreshes, so one that began earlier never
	// stores its older view over a later one's.
	refreshing sync.Mutex

	nudge    chan struct{}
	quit     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// NewRegistry builds a registry; Start begins its refreshes.
func NewRegistry(store RegistryStore, interval time.Duration, logger *slog.Logger) *Registry {
	r := &Registry{store: store, interval: interval, logger: logger, nudge: make(chan struct{}, 1)}
	empty := map[string][]Monitor{}
	r.active.Store(&empty)
	return r
}

// Start reads the monitors once, then refreshes them in the background
// until Shutdown.
func (r *Registry) Start(ctx context.Context, _ component.Host) error {
	if err := r.Refresh(ctx); err != nil {
		r.logger.Warn("monitors: reading the monitors failed; none run until a read succeeds, retried every monitors.refresh_interval; if it repeats, check the store", "err", err)
	}
	r.quit, r.done = make(chan struct{}), make(chan struct{})
	go r.loop(context.WithoutCancel(ctx))
	return nil
}

// Shutdown stops the refreshes after the one in progress (a store read
// is not cut off part way); it is idempotent.
func (r *Registry) Shutdown(ctx context.Context) error {
	if r.quit == nil {
		return nil
	}
	r.stopOnce.Do(func() { close(r.quit) })
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Registry) loop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
		case <-r.nudge:
		}
		if err := r.Refresh(ctx); err != nil {
			r.logger.Warn("monitors: refreshing the monitors failed; the last ones read stay in force until the next refresh (monitors.refresh_interval); if it repeats, check the store", "err", err)
		}
	}
}

// Nudge asks for a refresh now: a monitor object was written.
func (r *Registry) Nudge() {
	select {
	case r.nudge <- struct{}{}:
	default:
	}
}

// Refresh reads every project's active monitors.
func (r *Registry) Refresh(ctx context.Context) error {
	r.refreshing.Lock()
	defer r.refreshing.Unlock()
	projects, err := r.store.ProjectsWithObjectClass(ctx, MonitorClass, MaxMonitorProjects)
	if err != nil {
		return fmt.Errorf("list projects with monitors: %w", err)
	}
	next := make(map[string][]Monitor, len(projects))
	for _, p := range projects {
		ms, err := r.read(ctx, p)
		if err != nil {
			return err
		}
		if len(ms) > 0 {
			next[p] = ms
		}
	}
	r.active.Store(&next)
	return nil
}

// read returns a project's active monitors. A monitor whose value does
// not parse runs nowhere; /monitors/status says why.
func (r *Registry) read(ctx context.Context, projectID string) ([]Monitor, error) {
	limit := int64(MaxMonitorsPerProject)
	res, err := r.store.QueryObjects(ctx, storage.ObjQueryReq{ProjectID: projectID, Limit: &limit,
		Filter: &storage.ObjectVersionFilter{BaseObjectClasses: []string{MonitorClass}, LatestOnly: true}})
	if err != nil {
		return nil, fmt.Errorf("read the monitors of %s: %w", projectID, err)
	}
	var out []Monitor
	for _, o := range res.Objs {
		m, err := ParseMonitor(projectID, o.ObjectID, o.Digest, o.Val)
		if err != nil {
			continue
		}
		if o.WBUserID != nil {
			m.UserID = *o.WBUserID
		}
		if m.Active {
			out = append(out, m)
		}
	}
	return out, nil
}

// Wants reports whether an active monitor of the project samples the
// call, so the write path queues only calls some monitor may score (its
// op names and query are checked when the call is read back).
func (r *Registry) Wants(projectID, callID string) bool {
	for _, m := range (*r.active.Load())[projectID] {
		if Sampled(m.Name, callID, m.SamplingRate) {
			return true
		}
	}
	return false
}

// Active returns a project's active monitors.
func (r *Registry) Active(projectID string) []Monitor {
	return (*r.active.Load())[projectID]
}
