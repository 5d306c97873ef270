package automations

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

func TestAlertAutomationRules(t *testing.T) {
	ctx := context.Background()
	store, err := duckdb.Open(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	box, _ := secretbox.New(bytes.Repeat([]byte{1}, secretbox.KeyBytes))
	svc := NewService(Deps{Store: store, Objects: store, Box: box, Guard: egress.NewGuard(nil), MaxPayloadBytes: 1 << 20})
	hook, err := svc.CreateWebhook(ctx, WebhookInput{Entity: "acme", Name: "ci", URL: "https://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	const cond = `{"metric":"error_rate","window_seconds":300,"comparator":">","threshold":0.05}`
	alert := func(mutate func(a *storage.Automation)) storage.Automation {
		a := storage.Automation{ProjectID: "acme/app", Name: "errors", Scope: ScopeProject, Event: storage.EventCallAlert,
			WebhookID: hook.ID, Condition: cond, Payload: `{"v":${value},"s":"${alert_state} ${calls_url}"}`, Enabled: true}
		if mutate != nil {
			mutate(&a)
		}
		return a
	}
	for _, tc := range []struct {
		name, field string
		mutate      func(a *storage.Automation)
	}{
		{"no condition", "condition", func(a *storage.Automation) { a.Condition = "" }},
		{"bad metric", "condition.metric", func(a *storage.Automation) {
			a.Condition = `{"metric":"x","window_seconds":300,"comparator":">","threshold":1}`
		}},
		{"registry scope", "scope.type", func(a *storage.Automation) { a.Scope = ScopeRegistry }},
		{"alias regex", "collection_filter", func(a *storage.Automation) { a.AliasRegex = ".*" }},
		{"an artifact variable", "payload", func(a *storage.Automation) { a.Payload = `{"a":"${alias}"}` }},
		{"a condition on an artifact event", "condition", func(a *storage.Automation) { a.Event = storage.EventLinkArtifact }},
	} {
		_, err := svc.CreateAutomation(ctx, alert(tc.mutate))
		if !errors.Is(err, storage.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), tc.field+": ") {
			t.Errorf("%s: %v, want invalid argument naming %s", tc.name, err, tc.field)
		}
	}
	a, err := svc.CreateAutomation(ctx, alert(nil))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.GetAutomation(ctx, "acme/app", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := ParseCondition([]byte(stored.Condition)); err != nil || c.Metric != MetricErrorRate || c.Threshold != 0.05 || c.WindowSeconds != 300 {
		t.Fatalf("stored condition %s: %+v, %v", stored.Condition, c, err)
	}
	event := storage.EventLinkArtifact
	payload := `{"e":"${event_type}"}`
	got, err := svc.UpdateAutomation(ctx, "acme/app", a.ID, AutomationPatch{Event: &event, Payload: &payload})
	if err != nil || got.Condition != "" {
		t.Fatalf("turned into an artifact automation: %+v, %v; want its condition dropped", got, err)
	}
}
