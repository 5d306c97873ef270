package conformance

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// runAutomations runs every automations case (secrets, webhooks,
// automations, the event outbox and deliveries) against fresh stores.
func runAutomations(t *testing.T, newStore func(t *testing.T) storage.AutomationsBackend) {
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.AutomationsBackend)
	}{
		{"SecretsPutListRotate", testSecretsPutListRotate},
		{"SecretDeleteRefusedInUse", testSecretDeleteInUse},
		{"WebhooksCRUD", testWebhooksCRUD},
		{"WebhookRulesRefuse", testWebhookRules},
		{"AutomationsCRUD", testAutomationsCRUD},
		{"AutomationRulesRefuse", testAutomationRules},
		{"EventsDispatchOnce", testEventsDispatch},
		{"DeliveriesClaimUnderLease", testDeliveriesClaim},
		{"DeliveriesSaveListCount", testDeliveriesSaveList},
		{"DeliveriesGoWithTheirAutomation", testDeliveriesDeleted},
		{"AlertStatesAndTransitions", testAlertStates},
		{"AlertTransitionRecordedOnce", testAlertTransitionOnce},
		{"LeaseHeldByOneOwner", testLease},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

var bg = context.Background()

func secret(entity, name, value string, at time.Time) storage.Secret {
	return storage.Secret{Entity: entity, Name: name, Sealed: []byte(value), CreatedAt: at, UpdatedAt: at}
}

func webhook(entity, id, name string) storage.Webhook {
	return storage.Webhook{Entity: entity, ID: id, Name: name, URL: "https://example.com/" + id, CreatedAt: base, UpdatedAt: base}
}

func automation(project, id, name, webhookID string) storage.Automation {
	return storage.Automation{ProjectID: project, ID: id, Name: name, Scope: "project", Event: storage.EventLinkArtifact,
		WebhookID: webhookID, Payload: `{"e":"${event_type}"}`, Enabled: true, CreatedBy: "u1", CreatedAt: base, UpdatedAt: base}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testSecretsPutListRotate(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.PutSecret(bg, secret("acme", "TOKEN", "v1", base)))
	must(t, s.PutSecret(bg, secret("acme", "HOOK_KEY", "k1", base)))
	must(t, s.PutSecret(bg, secret("rival", "TOKEN", "r1", base)))
	later := base.Add(time.Hour)
	must(t, s.PutSecret(bg, secret("acme", "TOKEN", "v2", later)))
	got, err := s.GetSecret(bg, "acme", "TOKEN")
	must(t, err)
	if string(got.Sealed) != "v2" || !got.CreatedAt.Equal(base) || !got.UpdatedAt.Equal(later) {
		t.Fatalf("rotated secret = %q created %v updated %v; want v2 created %v updated %v",
			got.Sealed, got.CreatedAt, got.UpdatedAt, base, later)
	}
	list, err := s.ListSecrets(bg, "acme")
	must(t, err)
	if len(list) != 2 || list[0].Name != "HOOK_KEY" || list[1].Name != "TOKEN" {
		t.Fatalf("list = %+v, want HOOK_KEY, TOKEN", list)
	}
	for _, sec := range list {
		if sec.Sealed != nil {
			t.Fatalf("list returned the value of %s", sec.Name)
		}
	}
	_, err = s.GetSecret(bg, "other", "TOKEN")
	wantKind(t, "secret of another entity", err, storage.ErrNotFound)
	if list, err := s.ListSecrets(bg, "nobody"); err != nil || len(list) != 0 {
		t.Fatalf("list of an entity without secrets = %v, %v", list, err)
	}
}

func testSecretDeleteInUse(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.PutSecret(bg, secret("acme", "TOKEN", "v1", base)))
	w := webhook("acme", "wh1", "ci")
	w.AccessTokenSecret = "TOKEN"
	must(t, s.CreateWebhook(bg, w))
	wantKind(t, "delete a secret a webhook uses", s.DeleteSecret(bg, "acme", "TOKEN"), storage.ErrConflict)
	must(t, s.DeleteWebhook(bg, "acme", "wh1"))
	must(t, s.DeleteSecret(bg, "acme", "TOKEN"))
	wantKind(t, "delete it again", s.DeleteSecret(bg, "acme", "TOKEN"), storage.ErrNotFound)
	_, err := s.GetSecret(bg, "acme", "TOKEN")
	wantKind(t, "read a deleted secret", err, storage.ErrNotFound)
}

func testWebhooksCRUD(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.PutSecret(bg, secret("acme", "TOKEN", "v1", base)))
	must(t, s.PutSecret(bg, secret("acme", "SIGN", "k1", base)))
	b := webhook("acme", "wh-b", "beta")
	b.AccessTokenSecret, b.SigningSecret = "TOKEN", "SIGN"
	must(t, s.CreateWebhook(bg, b))
	must(t, s.CreateWebhook(bg, webhook("acme", "wh-a", "alpha")))
	must(t, s.CreateWebhook(bg, webhook("rival", "wh-r", "alpha")))
	list, err := s.ListWebhooks(bg, "acme")
	must(t, err)
	if len(list) != 2 || list[0].ID != "wh-a" || !reflect.DeepEqual(list[1], b) {
		t.Fatalf("list = %+v, want alpha then %+v", list, b)
	}
	b.Name, b.URL, b.AccessTokenSecret, b.UpdatedAt = "beta2", "https://example.org/x", "", base.Add(time.Minute)
	must(t, s.UpdateWebhook(bg, b))
	disabledAt := base.Add(2 * time.Hour)
	health := storage.WebhookHealth{FailingSince: &base, DisabledAt: &disabledAt, DisabledReason: "410 Gone"}
	must(t, s.SetWebhookHealth(bg, "acme", "wh-b", health))
	got, err := s.GetWebhook(bg, "acme", "wh-b")
	must(t, err)
	b.WebhookHealth = health
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("after update and health:\n got %+v\nwant %+v", got, b)
	}
	_, err = s.GetWebhook(bg, "rival", "wh-b")
	wantKind(t, "webhook read through another entity", err, storage.ErrNotFound)
	wantKind(t, "update a missing webhook", s.UpdateWebhook(bg, webhook("acme", "nope", "n")), storage.ErrNotFound)
	wantKind(t, "health of a missing webhook", s.SetWebhookHealth(bg, "acme", "nope", health), storage.ErrNotFound)
	must(t, s.DeleteWebhook(bg, "acme", "wh-a"))
	wantKind(t, "delete twice", s.DeleteWebhook(bg, "acme", "wh-a"), storage.ErrNotFound)
	if list, _ := s.ListWebhooks(bg, "acme"); len(list) != 1 {
		t.Fatalf("after delete: %+v", list)
	}
}

func testWebhookRules(t *testing.T, s storage.AutomationsBackend) {
	must(t, s.PutSecret(bg, secret("rival", "TOKEN", "v1", base)))
	must(t, s.CreateWebhook(bg, webhook("acme", "wh1", "ci")))
	wantKind(t, "duplicate name", s.CreateWebhook(bg, webhook("acme", "wh2", "ci")), storage.ErrConflict)
	w := webhook("acme", "wh3", "other")
	w.SigningSecret = "TOKEN" // only rival has it
	wantKind(t, "another entity's secret", s.CreateWebhook(bg, w), storage.ErrInvalidArgument)
	must(t, s.CreateWebhook(bg, webhook("acme", "wh3", "other")))
	renamed := webhook("acme", "wh3", "ci")
	wantKind(t, "rename onto a taken name", s.UpdateWebhook(bg, renamed), storage.ErrConflict)
	must(t, s.CreateAutomation(bg, automation("acme/p", "a1", "on link", "wh1")))
	wantKind(t, "delete a webhook in use", s.DeleteWebhook(bg, "acme", "wh1"), storage.ErrConflict)
}
