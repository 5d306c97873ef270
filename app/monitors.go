package app

import (
	"bytes"
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/monitors"
	"github.com/weftdev/weft/storage"
)

// monitorsPart is online scorers in this process: the registry of active
// monitors that the calls writer's tap consults, and in a process that
// stores calls the runner that competes for the monitors lease.
type monitorsPart struct {
	registry *monitors.Registry
	runner   *monitors.Runner
}

// buildMonitorsRegistry is the registry when monitors are enabled and
// this process stores calls (the embedded node, or the process role);
// nil otherwise.
func (s *Server) buildMonitorsRegistry() *monitors.Registry {
	mc := s.cfg.Monitors
	if !mc.Enabled || (len(s.cfg.BrokerList()) > 0 && !s.roles.Process) {
		return nil
	}
	return monitors.NewRegistry(s.store, mc.RefreshInterval, s.logger.With("component", "monitors"))
}

// tapCalls wraps the calls writer so stored calls of watched projects are
// queued for their monitors.
func (s *Server) tapCalls(w storage.CallWriter) storage.CallWriter {
	if s.monitors == nil {
		return w
	}
	return monitors.NewTap(w, s.store, s.monitors.registry, time.Now)
}

// buildMonitorsRunner adds the runner, which needs the write path's front
// and the gateway.
func (s *Server) buildMonitorsRunner() {
	if s.monitors == nil {
		return
	}
	mc := s.cfg.Monitors
	var llm monitors.Completer
	if s.gateway != nil {
		llm = s.gateway
	}
	s.monitors.runner = monitors.NewRunner(s.store, s.monitors.registry, llm, s.write.front, monitors.Pricer(s.usageCost),
		monitors.Options{Interval: mc.Interval, Owner: leaseOwner(), Run: true, DailyCapUSD: mc.DailySpendCapUSD,
			Batch: mc.Batch, Workers: mc.Workers, MaxAttempts: mc.MaxAttempts},
		s.logger.With("component", "monitors"), time.Now)
	st := &s.monitors.runner.Stats
	counter := func(status string, v interface{ Load() int64 }) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "weft_monitor_results_" + status,
			Help: "Scorer results of status " + status + " recorded by this process's monitors runner."},
			func() float64 { return float64(v.Load()) })
	}
	s.metrics.Registry.MustRegister(counter("scored", &st.Scored), counter("failed", &st.Failed),
		counter("skipped", &st.Skipped), counter("retrying", &st.Retried),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "weft_monitor_calls_not_sampled",
			Help: "Matching calls a monitor left out of its sample, or score calls, by this process."},
			func() float64 { return float64(st.Sampled.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "weft_monitor_calls_given_up",
			Help: "Queued calls given up after monitors.max_attempts rounds without being readable as ended."},
			func() float64 { return float64(st.Dropped.Load()) }))
}

// monitorsObjects wraps the object store so that publishing a monitor in
// this process is read by its registry before the publish is answered:
// calls stored after it are scored, not only those after the next
// refresh.
func (s *Server) monitorsObjects(store storage.ObjectStore) storage.ObjectStore {
	if s.monitors == nil {
		return store
	}
	return nudgingObjects{ObjectStore: store, registry: s.monitors.registry}
}

type nudgingObjects struct {
	storage.ObjectStore
	registry *monitors.Registry
}

// monitorMark is in the value of every Monitor object; objects without
// it cost one byte search.
var monitorMark = []byte(`"` + monitors.MonitorClass + `"`)

func (o nudgingObjects) CreateObject(ctx context.Context, req storage.ObjCreateReq) (storage.ObjCreateRes, error) {
	res, err := o.ObjectStore.CreateObject(ctx, req)
	if err == nil && bytes.Contains(req.Obj.Val, monitorMark) {
		o.follow(ctx)
	}
	return res, err
}

func (o nudgingObjects) DeleteObjects(ctx context.Context, req storage.ObjDeleteReq) (storage.ObjDeleteRes, error) {
	res, err := o.ObjectStore.DeleteObjects(ctx, req)
	if err == nil {
		for _, v := range res.DeletedVersions {
			if v.BaseObjectClass != nil && *v.BaseObjectClass == monitors.MonitorClass {
				o.follow(ctx)
				break
			}
		}
	}
	return res, err
}

// follow reads the monitors again now; if that fails, the background
// refresh tries soon.
func (o nudgingObjects) follow(ctx context.Context) {
	if err := o.registry.Refresh(ctx); err != nil {
		o.registry.Nudge()
	}
}
