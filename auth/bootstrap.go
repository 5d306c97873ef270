package auth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// AdminKeyFile is where the first-start admin key is kept (mode 0600).
const AdminKeyFile = "admin-key"

// EnsureAdminKey creates the instance-wide admin key when the store has no
// keys at all. It returns the secret only when it created one, so the
// caller prints it exactly once; the secret is also written to
// dir/admin-key with mode 0600 for later use by the operator.
func EnsureAdminKey(ctx context.Context, store KeyStore, dir string, now time.Time) (string, error) {
	keys, err := store.ListKeys(ctx)
	if err != nil {
		return "", err
	}
	if len(keys) > 0 {
		return "", nil
	}
	k, secret, err := NewKey(AllEntities, RoleAdmin, "admin", now)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, AdminKeyFile)
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := store.PutKey(ctx, k); err != nil {
		return "", err
	}
	return secret, nil
}
