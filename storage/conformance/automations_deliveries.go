package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func testAutomationsCRUD(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.CreateWebhook(bg, webhook("acme", "wh1", "ci")))
	must(t, s.CreateWebhook(bg, webhook("acme", "wh2", "cd")))
	b := automation("acme/wandb-registry-models", "a-b", "beta", "wh1")
	b.Scope, b.Collection, b.Event, b.AliasRegex = "collection", "classifier", storage.EventAddArtifactAlias, "^prod"
	b.Description = "alias added"
	must(t, s.CreateAutomation(bg, b))
	must(t, s.CreateAutomation(bg, automation("acme/wandb-registry-models", "a-a", "alpha", "wh2")))
	must(t, s.CreateAutomation(bg, automation("acme/other", "a-o", "alpha", "wh1")))
	list, err := s.ListAutomations(bg, "acme/wandb-registry-models")
	must(t, err)
	if len(list) != 2 || list[0].ID != "a-a" || !reflect.DeepEqual(list[1], b) {
		t.Fatalf("list = %+v, want alpha then %+v", list, b)
	}
	b.Name, b.Enabled, b.WebhookID, b.Payload, b.UpdatedAt = "beta2", false, "wh2", `{"x":1}`, base.Add(time.Hour)
	b.Scope, b.Collection, b.CollectionFilter = "registry", "", ""
	must(t, s.UpdateAutomation(bg, b))
	got, err := s.GetAutomation(bg, "acme/wandb-registry-models", "a-b")
	must(t, err)
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("after update:\n got %+v\nwant %+v", got, b)
	}
	_, err = s.GetAutomation(bg, "acme/other", "a-b")
	wantKind(t, "automation read through another project", err, storage.ErrNotFound)
	must(t, s.DeleteAutomation(bg, "acme/wandb-registry-models", "a-b"))
	wantKind(t, "delete twice", s.DeleteAutomation(bg, "acme/wandb-registry-models", "a-b"), storage.ErrNotFound)
	wantKind(t, "update a deleted one", s.UpdateAutomation(bg, b), storage.ErrNotFound)
}

func testAutomationRules(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.CreateWebhook(bg, webhook("acme", "wh1", "ci")))
	must(t, s.CreateWebhook(bg, webhook("rival", "wh-r", "ci")))
	must(t, s.CreateAutomation(bg, automation("acme/p", "a1", "on link", "wh1")))
	wantKind(t, "duplicate name", s.CreateAutomation(bg, automation("acme/p", "a2", "on link", "wh1")), storage.ErrConflict)
	must(t, s.CreateAutomation(bg, automation("acme/q", "a2", "on link", "wh1")))
	wantKind(t, "another entity's webhook", s.CreateAutomation(bg, automation("acme/p", "a3", "x", "wh-r")), storage.ErrInvalidArgument)
	wantKind(t, "update onto another entity's webhook", s.UpdateAutomation(bg, automation("acme/q", "a2", "on link", "wh-r")), storage.ErrInvalidArgument)
	must(t, s.CreateAutomation(bg, automation("acme/p", "a3", "x", "wh1")))
	wantKind(t, "rename onto a taken name", s.UpdateAutomation(bg, automation("acme/p", "a3", "on link", "wh1")), storage.ErrConflict)
}

func event(id, project string, at time.Time) storage.ArtifactEvent {
	return storage.ArtifactEvent{ID: id, Type: storage.EventAddArtifactAlias, ProjectID: project, Collection: "model",
		VersionIndex: 3, Digest: "d1", Aliases: []string{"prod"}, Author: "u1",
		Metadata: json.RawMessage(`{"acc":0.9}`), At: at}
}

func delivery(id, project, automationID string, due time.Time) storage.Delivery {
	return storage.Delivery{ID: id, ProjectID: project, AutomationID: automationID, Entity: "acme", WebhookID: "wh1",
		EventID: "ev-" + id, EventType: storage.EventLinkArtifact, Body: []byte("sealed"), Preview: `{"a":1}`,
		State: storage.DeliveryPending, NextAttemptAt: due, RetryFrom: base, CreatedAt: due, UpdatedAt: due}
}

func testEventsDispatch(t *testing.T, s storage.AutomationsBackend) {
	e1, e2, e3 := event("e1", "acme/p", base), event("e2", "acme/p", base.Add(time.Second)), event("e3", "acme/q", base)
	e2.Type, e2.Aliases, e2.Source, e2.Metadata = storage.EventLinkArtifact, []string{}, "weave:///acme/p/object/model:d0", nil
	must(t, s.RecordEvents(bg, []storage.ArtifactEvent{e1, e2}))
	must(t, s.RecordEvents(bg, []storage.ArtifactEvent{e3}))
	got, err := s.PendingEvents(bg, 2)
	must(t, err)
	e2.Metadata = json.RawMessage(`{}`)
	if !reflect.DeepEqual(got, []storage.ArtifactEvent{e1, e2}) {
		t.Fatalf("pending = %+v\nwant %+v", got, []storage.ArtifactEvent{e1, e2})
	}
	d := delivery("d1", "acme/p", "a1", base)
	must(t, s.DispatchEvents(bg, []string{"e1", "e2"}, []storage.Delivery{d}))
	d.State, d.Attempts = storage.DeliveryDelivered, 1
	must(t, s.SaveDeliveries(bg, []storage.Delivery{d}))
	// A dispatch repeated after a crash adds nothing and resets nothing.
	must(t, s.DispatchEvents(bg, []string{"e1"}, []storage.Delivery{delivery("d1", "acme/p", "a1", base)}))
	if got, _ := s.GetDelivery(bg, "acme/p", "d1"); got.State != storage.DeliveryDelivered {
		t.Fatalf("redispatch reset the delivery to %q", got.State)
	}
	rest, err := s.PendingEvents(bg, 10)
	must(t, err)
	if len(rest) != 1 || rest[0].ID != "e3" {
		t.Fatalf("after dispatch pending = %+v, want e3", rest)
	}
}

func testDeliveriesClaim(t *testing.T, s storage.AutomationsBackend) {
	var ds []storage.Delivery
	for i := range 5 {
		ds = append(ds, delivery(fmt.Sprintf("d%d", i), "acme/p", "a1", base.Add(time.Duration(4-i)*time.Second)))
	}
	ds[4].State = storage.DeliveryDelivered
	ds[0].NextAttemptAt = base.Add(time.Hour) // not due
	must(t, s.AddDeliveries(bg, ds))
	now := base.Add(10*time.Second + 123456789) // finer than either store keeps
	first, err := s.ClaimDeliveries(bg, "w1", now, time.Minute, 2)
	must(t, err)
	if ids := deliveryIDs(first); !reflect.DeepEqual(ids, []string{"d3", "d2"}) {
		t.Fatalf("first claim = %v, want the two earliest due [d3 d2]", ids)
	}
	if first[0].LeaseOwner != "w1" || first[0].LeaseUntil == nil || first[0].LeaseUntil.Sub(now.Add(time.Minute)).Abs() >= time.Microsecond {
		t.Fatalf("claimed lease = %q until %v", first[0].LeaseOwner, first[0].LeaseUntil)
	}
	second, err := s.ClaimDeliveries(bg, "w2", now, time.Minute, 10)
	must(t, err)
	if ids := deliveryIDs(second); !reflect.DeepEqual(ids, []string{"d1"}) {
		t.Fatalf("second claim = %v, want [d1]: leased, delivered and future ones stay", ids)
	}
	afterLease := now.Add(2 * time.Minute)
	third, err := s.ClaimDeliveries(bg, "w3", afterLease, time.Minute, 10)
	must(t, err)
	if ids := deliveryIDs(third); !reflect.DeepEqual(ids, []string{"d3", "d2", "d1"}) {
		t.Fatalf("claim after the leases ran out = %v, want [d3 d2 d1]", ids)
	}
}

func testDeliveriesSaveList(t *testing.T, s storage.AutomationsBackend) {
	for i := range 3 {
		d := delivery(fmt.Sprintf("d%d", i), "acme/p", "a1", base.Add(time.Duration(i)*time.Minute))
		must(t, s.AddDeliveries(bg, []storage.Delivery{d}))
	}
	must(t, s.AddDeliveries(bg, []storage.Delivery{delivery("x", "acme/q", "a1", base)}))
	d, err := s.GetDelivery(bg, "acme/p", "d1")
	must(t, err)
	at := base.Add(time.Hour)
	d.State, d.Attempts, d.NextAttemptAt, d.LeaseOwner, d.LeaseUntil = storage.DeliveryFailed, 4, at, "", nil
	d.DeliveryResult = storage.DeliveryResult{LastAttemptAt: &at, LastStatus: 503, LastError: "503 Service Unavailable",
		LastResponse: "busy", LastLatencyMS: 12}
	d.UpdatedAt = at
	other, err := s.GetDelivery(bg, "acme/p", "d2")
	must(t, err)
	other.LeaseOwner, other.LeaseUntil = "w9", &at
	must(t, s.SaveDeliveries(bg, []storage.Delivery{d, other, delivery("nope", "acme/p", "a1", base)}))
	got, err := s.GetDelivery(bg, "acme/p", "d1")
	must(t, err)
	if !reflect.DeepEqual(got, d) {
		t.Fatalf("saved:\n got %+v\nwant %+v", got, d)
	}
	list, err := s.ListDeliveries(bg, "acme/p", "a1", 2)
	must(t, err)
	if ids := deliveryIDs(list); !reflect.DeepEqual(ids, []string{"d2", "d1"}) {
		t.Fatalf("list = %v, want the newest two [d2 d1]", ids)
	}
	_, err = s.GetDelivery(bg, "acme/q", "d1")
	wantKind(t, "delivery read through another project", err, storage.ErrNotFound)
	_, err = s.GetDelivery(bg, "acme/p", "nope")
	wantKind(t, "a saved delivery that was never added", err, storage.ErrNotFound)
	if got, _ := s.GetDelivery(bg, "acme/p", "d2"); got.LeaseOwner != "w9" || got.LeaseUntil == nil || !got.LeaseUntil.Equal(at) {
		t.Fatalf("second delivery of one save: lease %q until %v", got.LeaseOwner, got.LeaseUntil)
	}
	for state, want := range map[string]int64{storage.DeliveryPending: 3, storage.DeliveryFailed: 1, storage.DeliveryDelivered: 0} {
		if n, err := s.CountDeliveries(bg, state); err != nil || n != want {
			t.Fatalf("count %s = %d, %v; want %d", state, n, err, want)
		}
	}
}

func testDeliveriesDeleted(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.CreateWebhook(bg, webhook("acme", "wh1", "ci")))
	must(t, s.CreateAutomation(bg, automation("acme/p", "a1", "one", "wh1")))
	must(t, s.CreateAutomation(bg, automation("acme/p", "a2", "two", "wh1")))
	must(t, s.AddDeliveries(bg, []storage.Delivery{delivery("d1", "acme/p", "a1", base), delivery("d2", "acme/p", "a2", base)}))
	must(t, s.DeleteAutomation(bg, "acme/p", "a1"))
	if list, _ := s.ListDeliveries(bg, "acme/p", "a1", 10); len(list) != 0 {
		t.Fatalf("deliveries of a deleted automation remain: %v", deliveryIDs(list))
	}
	claimed, err := s.ClaimDeliveries(bg, "w", base.Add(time.Minute), time.Minute, 10)
	must(t, err)
	if ids := deliveryIDs(claimed); !reflect.DeepEqual(ids, []string{"d2"}) {
		t.Fatalf("claim after delete = %v, want [d2]", ids)
	}
}

func deliveryIDs(ds []storage.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
