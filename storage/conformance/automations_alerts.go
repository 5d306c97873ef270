package conformance

import (
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func alertAutomation(project, id, name string) storage.Automation {
	a := automation(project, id, name, "wh1")
	a.Event, a.Condition = storage.EventCallAlert, `{"metric":"error_rate","window_seconds":300,"comparator":">","threshold":0.05}`
	return a
}

func testAlertStates(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.CreateWebhook(bg, webhook("acme", "wh1", "ci")))
	a1, a2 := alertAutomation("acme/p", "a1", "errors"), alertAutomation("acme/q", "a2", "budget")
	off := alertAutomation("acme/p", "a3", "off")
	off.Enabled = false
	for _, a := range []storage.Automation{a1, a2, off, automation("acme/p", "a4", "on link", "wh1")} {
		must(t, s.CreateAutomation(bg, a))
	}
	got, err := s.AlertAutomations(bg, 10)
	must(t, err)
	if !reflect.DeepEqual(got, []storage.Automation{a1, a2}) {
		t.Fatalf("alert automations = %+v, want the enabled CALL_ALERT ones with their condition", got)
	}
	if got, err := s.AlertAutomations(bg, 1); err != nil || len(got) != 1 {
		t.Fatalf("limit 1: %d automations, %v", len(got), err)
	}
	s1 := storage.AlertState{ProjectID: "acme/p", AutomationID: "a1", State: storage.AlertOK, Value: 0.01,
		EvaluatedAt: base, ChangedAt: base}
	s2 := storage.AlertState{ProjectID: "acme/q", AutomationID: "a2", State: storage.AlertOK, Value: 3, EvaluatedAt: base, ChangedAt: base}
	must(t, s.SaveAlertStates(bg, []storage.AlertState{s1, s2}))
	s1.Value, s1.EvaluatedAt = 0.02, base.Add(time.Minute)
	must(t, s.SaveAlertStates(bg, []storage.AlertState{s1}))
	states, err := s.AlertStates(bg, "")
	must(t, err)
	if !reflect.DeepEqual(states, []storage.AlertState{s1, s2}) {
		t.Fatalf("states = %+v\nwant %+v", states, []storage.AlertState{s1, s2})
	}
	states, err = s.AlertStates(bg, "acme/q")
	must(t, err)
	if !reflect.DeepEqual(states, []storage.AlertState{s2}) {
		t.Fatalf("states of acme/q = %+v, want only its own", states)
	}
	must(t, s.DeleteAutomation(bg, "acme/p", "a1"))
	if states, err = s.AlertStates(bg, "acme/p"); err != nil || len(states) != 0 {
		t.Fatalf("states after the automation's delete = %+v, %v; want none", states, err)
	}
}

func testAlertTransitionOnce(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.CreateWebhook(bg, webhook("acme", "wh1", "ci")))
	must(t, s.CreateAutomation(bg, alertAutomation("acme/p", "a1", "errors")))
	at := base.Add(time.Minute)
	st := storage.AlertState{ProjectID: "acme/p", AutomationID: "a1", State: storage.AlertFiring, Value: 0.2, Seq: 1,
		EvaluatedAt: at, ChangedAt: at}
	tr := storage.AlertTransition{ProjectID: "acme/p", AutomationID: "a1", Seq: 1, State: storage.AlertFiring, Value: 0.2, Threshold: 0.05, At: at}
	d := delivery("d1", "acme/p", "a1", at)
	d.EventType = storage.EventCallAlertFiring
	must(t, s.RecordAlertTransition(bg, st, tr, d))
	// The same transition again, as after a crash part way: nothing doubles.
	must(t, s.RecordAlertTransition(bg, st, tr, d))
	resolved := tr
	resolved.Seq, resolved.State, resolved.Value, resolved.At = 2, storage.AlertOK, 0.01, at.Add(time.Minute)
	st2 := st
	st2.State, st2.Seq, st2.Value, st2.EvaluatedAt, st2.ChangedAt = storage.AlertOK, 2, 0.01, resolved.At, resolved.At
	d2 := delivery("d2", "acme/p", "a1", resolved.At)
	must(t, s.RecordAlertTransition(bg, st2, resolved, d2))
	states, err := s.AlertStates(bg, "acme/p")
	must(t, err)
	if !reflect.DeepEqual(states, []storage.AlertState{st2}) {
		t.Fatalf("state = %+v, want %+v", states, st2)
	}
	ts, err := s.ListAlertTransitions(bg, "acme/p", "a1", 10)
	must(t, err)
	if !reflect.DeepEqual(ts, []storage.AlertTransition{resolved, tr}) {
		t.Fatalf("transitions = %+v, want resolved then firing, once each", ts)
	}
	if ts, err := s.ListAlertTransitions(bg, "acme/p", "a1", 1); err != nil || len(ts) != 1 || ts[0].Seq != 2 {
		t.Fatalf("limit 1 = %+v, %v; want the newest", ts, err)
	}
	if ts, err := s.ListAlertTransitions(bg, "acme/other", "a1", 10); err != nil || len(ts) != 0 {
		t.Fatalf("another project's transitions = %+v, %v; want none", ts, err)
	}
	ds, err := s.ListDeliveries(bg, "acme/p", "a1", 10)
	must(t, err)
	if len(ds) != 2 {
		t.Fatalf("deliveries = %d, want one per transition", len(ds))
	}
}

func testLease(t *testing.T, s storage.AutomationsBackend) {
	ttl := 10 * time.Second
	claim := func(owner string, at time.Time) bool {
		t.Helper()
		ok, err := s.ClaimLease(bg, "alerts", owner, at, ttl)
		must(t, err)
		return ok
	}
	if !claim("p1", base) {
		t.Fatal("a free lease was not granted")
	}
	if claim("p2", base.Add(time.Second)) {
		t.Fatal("a lease held by p1 was granted to p2")
	}
	if !claim("p1", base.Add(5*time.Second)) {
		t.Fatal("p1 could not extend its own lease")
	}
	if claim("p2", base.Add(14*time.Second)) {
		t.Fatal("p2 took p1's extended lease before it ended")
	}
	if !claim("p2", base.Add(16*time.Second)) {
		t.Fatal("p2 could not take an expired lease")
	}
	if claim("p1", base.Add(17*time.Second)) {
		t.Fatal("p1 took back p2's lease")
	}
	if ok, err := s.ClaimLease(bg, "other", "p1", base.Add(17*time.Second), ttl); err != nil || !ok {
		t.Fatalf("a lease of another name: %v, %v; want granted", ok, err)
	}
}
