package automations

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

// TestRecordedEventsSurviveRestart: an alias write returns once its
// event is in the outbox; a store closed before dispatch (a crash) still
// holds it, and the next process dispatches it once.
func TestRecordedEventsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	box, _ := secretbox.New(bytes.Repeat([]byte{9}, secretbox.KeyBytes))
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	open := func() *duckdb.Store {
		s, err := duckdb.Open(ctx, dir, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	store := open()
	seedAutomation(t, store, box, now)
	created, err := store.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{ProjectID: "acme/p",
		ObjectID: "clf", Val: json.RawMessage(`{"acc":0.5}`)}})
	if err != nil {
		t.Fatal(err)
	}
	disp := NewDispatcher(store, box, 1<<20, func() time.Time { return now })
	objects := NewObjects(store, NewOutbox(store, disp, func() {}, time.Hour, slog.New(slog.DiscardHandler)), func() time.Time { return now })
	if err := objects.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: "acme/p", ObjectID: "clf", Digest: "latest",
		Aliases: []string{"prod", "prod"}}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil { // the process dies before dispatching
		t.Fatal(err)
	}

	store = open()
	defer store.Close()
	outbox := NewOutbox(store, NewDispatcher(store, box, 1<<20, func() time.Time { return now }), func() {}, time.Hour, slog.New(slog.DiscardHandler))
	if n, err := outbox.DispatchOnce(ctx); err != nil || n != 1 {
		t.Fatalf("dispatch after restart = %d events, %v; want the one recorded", n, err)
	}
	if n, err := outbox.DispatchOnce(ctx); err != nil || n != 0 {
		t.Fatalf("second dispatch = %d, %v; want nothing left", n, err)
	}
	ds, err := store.ListDeliveries(ctx, "acme/p", "au1", 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries = %v, %v", ds, err)
	}
	body, err := box.Open(ds[0].Body, delivery.BodyContext(ds[0].ID))
	if err != nil || string(body) != `{"a":"prod","d":"weave:///acme/p/object/clf:`+created.Digest+`","k":"key-1"}` {
		t.Fatalf("body = %s, %v", body, err)
	}
	if ds[0].Preview != `{"a":"prod","d":"weave:///acme/p/object/clf:`+created.Digest+`","k":"[secret]"}` {
		t.Fatalf("preview = %s", ds[0].Preview)
	}
}

func seedAutomation(t *testing.T, store *duckdb.Store, box *secretbox.Box, now time.Time) {
	t.Helper()
	ctx := context.Background()
	sealed, _ := box.Seal([]byte("key-1"), delivery.SecretContext("acme", "SIGN"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(store.PutSecret(ctx, storage.Secret{Entity: "acme", Name: "SIGN", Sealed: sealed, CreatedAt: now, UpdatedAt: now}))
	must(store.CreateWebhook(ctx, storage.Webhook{Entity: "acme", ID: "wh1", Name: "ci", URL: "https://example.com",
		SigningSecret: "SIGN", CreatedAt: now, UpdatedAt: now}))
	must(store.CreateAutomation(ctx, storage.Automation{ProjectID: "acme/p", ID: "au1", Name: "a", Scope: ScopeProject,
		Event: storage.EventAddArtifactAlias, AliasRegex: "prod", WebhookID: "wh1", Enabled: true,
		Payload: `{"a":"${alias}","d":"${artifact_version}","k":"$SIGN"}`, CreatedAt: now, UpdatedAt: now}))
}
