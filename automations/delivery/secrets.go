package delivery

import (
	"context"
	"fmt"

	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/storage"
)

// SecretContext binds a sealed secret value to its entity and name.
func SecretContext(entity, name string) string { return "secret:" + entity + "/" + name }

// BodyContext binds a sealed delivery body to its delivery.
func BodyContext(deliveryID string) string { return "delivery:" + deliveryID }

// SecretGetter reads sealed secrets.
type SecretGetter interface {
	GetSecret(ctx context.Context, entity, name string) (storage.Secret, error)
}

// OpenSecret returns a secret's value; "" for no name.
func OpenSecret(ctx context.Context, store SecretGetter, box *secretbox.Box, entity, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	sec, err := store.GetSecret(ctx, entity, name)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	plain, err := box.Open(sec.Sealed, SecretContext(entity, name))
	if err != nil {
		// Unavailable, not a client's mistake: the process needs the key
		// that sealed it (the message says which settings).
		return "", fmt.Errorf("secret %s: %w: %w", name, storage.ErrUnavailable, err)
	}
	return string(plain), nil
}

// WebhookCredentials opens a webhook's access token and signing secret.
func WebhookCredentials(ctx context.Context, store SecretGetter, box *secretbox.Box, w storage.Webhook) (token, secret string, err error) {
	if token, err = OpenSecret(ctx, store, box, w.Entity, w.AccessTokenSecret); err != nil {
		return "", "", err
	}
	if secret, err = OpenSecret(ctx, store, box, w.Entity, w.SigningSecret); err != nil {
		return "", "", err
	}
	return token, secret, nil
}
