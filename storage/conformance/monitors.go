package conformance

import (
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

type monitorStore interface {
	storage.MonitorStore
	storage.ObjectStore
}

func runMonitors(t *testing.T, newStore func(t *testing.T) monitorStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s monitorStore)
	}{
		{"QueueOnceInOrder", testMonitorQueue},
		{"ResultsOncePerScorerVersion", testMonitorResults},
		{"ProjectsWithMonitors", testProjectsWithMonitors},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

func testMonitorQueue(t *testing.T, s monitorStore) {
	q := func(project, id string, at time.Time) storage.MonitorCall {
		return storage.MonitorCall{ProjectID: project, CallID: id, QueuedAt: at, NextAt: at}
	}
	c1, c2, c3 := q("acme/p", "c1", base), q("acme/q", "c2", base.Add(time.Second)), q("acme/p", "c3", base.Add(2*time.Second))
	must(t, s.EnqueueMonitorCalls(bg, []storage.MonitorCall{c2, c1}))
	// Queuing again keeps the first place: a replay must not push a call
	// back.
	again := q("acme/p", "c1", base.Add(time.Hour))
	must(t, s.EnqueueMonitorCalls(bg, []storage.MonitorCall{again, c3}))
	got, err := s.PendingMonitorCalls(bg, base.Add(time.Minute), 10)
	must(t, err)
	if want := []storage.MonitorCall{c1, c2, c3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pending = %+v\nwant %+v", got, want)
	}
	if got, err := s.PendingMonitorCalls(bg, base.Add(time.Minute), 2); err != nil || len(got) != 2 {
		t.Fatalf("limit 2: %d calls, %v", len(got), err)
	}
	if got, err := s.PendingMonitorCalls(bg, base.Add(-time.Second), 10); err != nil || len(got) != 0 {
		t.Fatalf("before any is due: %+v, %v; want none", got, err)
	}
	deferred := c1
	deferred.Attempts, deferred.NextAt = 1, base.Add(10*time.Minute)
	must(t, s.DeferMonitorCalls(bg, []storage.MonitorCall{deferred}))
	must(t, s.RemoveMonitorCalls(bg, []storage.MonitorCall{c2}))
	got, err = s.PendingMonitorCalls(bg, base.Add(time.Minute), 10)
	must(t, err)
	if want := []storage.MonitorCall{c3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pending after a defer and a remove = %+v\nwant %+v", got, want)
	}
	got, err = s.PendingMonitorCalls(bg, base.Add(time.Hour), 10)
	must(t, err)
	if want := []storage.MonitorCall{deferred, c3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pending once the deferred call is due = %+v\nwant %+v", got, want)
	}
}

func testMonitorResults(t *testing.T, s monitorStore) {
	r := func(call, scorer, monitor, status string, cost float64, at time.Time) storage.MonitorResult {
		return storage.MonitorResult{ProjectID: "acme/p", CallID: call, ScorerRef: scorer, Monitor: monitor,
			MonitorRef: "weave:///acme/p/object/" + monitor + ":m1", Status: status, Message: status + " " + call, CostUSD: cost, At: at}
	}
	const v1, v2 = "weave:///acme/p/object/judge:d1", "weave:///acme/p/object/judge:d2"
	a := r("c1", v1, "quality", storage.MonitorFailed, 0, base)
	b := r("c1", v2, "quality", storage.MonitorScored, 0.25, base.Add(time.Second))
	c := r("c2", v1, "safety", storage.MonitorSkipped, 0, base.Add(2*time.Second))
	other := r("c1", v1, "quality", storage.MonitorScored, 1, base)
	other.ProjectID = "acme/q"
	must(t, s.RecordMonitorResults(bg, []storage.MonitorResult{a, b, c, other}))
	// The same call and scorer version again replaces the row.
	a2 := r("c1", v1, "quality", storage.MonitorScored, 0.5, base.Add(3*time.Second))
	must(t, s.RecordMonitorResults(bg, []storage.MonitorResult{a2}))
	got, err := s.MonitorResults(bg, "acme/p", []string{"c1", "c2", "c9"})
	must(t, err)
	if want := []storage.MonitorResult{a2, b, c}; !reflect.DeepEqual(got, want) {
		t.Fatalf("results = %+v\nwant %+v", got, want)
	}
	stats, err := s.MonitorStats(bg, "acme/p", base)
	must(t, err)
	last1, last2 := base.Add(3*time.Second), base.Add(2*time.Second)
	want := []storage.MonitorStats{{Monitor: "quality", Scored: 2, CostUSD: 0.75, LastAt: &last1},
		{Monitor: "safety", Skipped: 1, LastAt: &last2}}
	if !reflect.DeepEqual(stats, want) {
		t.Fatalf("stats = %+v\nwant %+v", stats, want)
	}
	if stats, err := s.MonitorStats(bg, "acme/p", base.Add(time.Hour)); err != nil || len(stats) != 0 {
		t.Fatalf("stats since later = %+v, %v; want none", stats, err)
	}
	fails, err := s.MonitorFailures(bg, "acme/p", 10)
	must(t, err)
	if want := []storage.MonitorResult{c}; !reflect.DeepEqual(fails, want) {
		t.Fatalf("failures = %+v\nwant %+v", fails, want)
	}
}

func testProjectsWithMonitors(t *testing.T, s monitorStore) {
	mon := `{"_type":"Monitor","_class_name":"Monitor","_bases":["Object","BaseModel"],"name":"m","sampling_rate":1,"scorers":[],"op_names":[],"active":true}`
	objCreate(t, s, "acme/b", "m", mon)
	objCreate(t, s, "acme/a", "m", mon)
	objCreate(t, s, "acme/c", "plain", `{"x":1}`)
	got, err := s.ProjectsWithObjectClass(bg, "Monitor", 10)
	must(t, err)
	if want := []string{"acme/a", "acme/b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("projects with monitors = %v, want %v", got, want)
	}
	if _, err := s.DeleteObjects(bg, storage.ObjDeleteReq{ProjectID: "acme/a", ObjectID: "m"}); err != nil {
		t.Fatal(err)
	}
	got, err = s.ProjectsWithObjectClass(bg, "Monitor", 10)
	must(t, err)
	if want := []string{"acme/b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a delete = %v, want %v", got, want)
	}
}
