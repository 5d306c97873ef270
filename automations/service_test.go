package automations

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/duckdb"
)

// TestOtherKeyIsUnavailable: a process whose secrets key differs from
// the one that sealed a secret answers 503 naming the setting to fix,
// never a 500 or the wrong value.
func TestOtherKeyIsUnavailable(t *testing.T) {
	ctx := context.Background()
	store, err := duckdb.Open(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	service := func(keyByte byte) *Service {
		box, _ := secretbox.New(bytes.Repeat([]byte{keyByte}, secretbox.KeyBytes))
		client := egress.NewClient(egress.NewGuard(nil), egress.ClientOptions{Timeout: time.Second})
		return NewService(Deps{Store: store, Objects: store, Box: box, Guard: egress.NewGuard(nil),
			Sender: delivery.NewSender(client, 1024, "t", nil), MaxPayloadBytes: 1 << 20})
	}
	first, second := service(1), service(2)
	if _, err := first.PutSecret(ctx, "acme", "SIGN", "v"); err != nil {
		t.Fatal(err)
	}
	hook, err := first.CreateWebhook(ctx, WebhookInput{Entity: "acme", Name: "ci", URL: "https://example.com", Secret: "SIGN"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = second.TestWebhook(ctx, "acme", hook.ID, "")
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), secretbox.EnvKey) {
		t.Fatalf("test through a process with another key = %v; want unavailable, naming %s", err, secretbox.EnvKey)
	}
}
