package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"time"
)

// Key is a stored API key. The secret itself is never stored: only its
// SHA-256, which is enough for random 238-bit keys (no password stretching
// is needed when the secret has full entropy).
type Key struct {
	ID        string     `json:"id"`
	Hash      string     `json:"hash"`
	UserID    string     `json:"user_id"`
	Entity    string     `json:"entity"`
	Role      Role       `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Principal returns the caller this key authenticates.
func (k Key) Principal() Principal {
	return Principal{KeyID: k.ID, UserID: k.UserID, Entity: k.Entity, Role: k.Role}
}

// ErrKeyNotFound is returned by KeyStore lookups that match nothing.
var ErrKeyNotFound = errors.New("key not found")

// KeyStore persists keys. Implementations must be safe for concurrent use
// and, where several processes share the store, see each other's writes.
type KeyStore interface {
	// PutKey stores a new key.
	PutKey(ctx context.Context, k Key) error
	// KeyByHash returns the key with that hash, revoked or not.
	KeyByHash(ctx context.Context, hash string) (Key, error)
	// ListKeys returns every key, revoked ones included.
	ListKeys(ctx context.Context) ([]Key, error)
	// RevokeKey marks the key revoked at the given time.
	RevokeKey(ctx context.Context, id string, at time.Time) error
}

// KeyPrefix starts every key weft issues. The 40 characters after the
// dash match the length W&B clients check API keys for.
const KeyPrefix = "weft-"

const keyAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// HashKey is the stored form of a key.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func randomString(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(keyAlphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("random: %w", err)
		}
		b[i] = keyAlphabet[v.Int64()]
	}
	return string(b), nil
}

var entityName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// NewKey makes a key for entity with role and returns it with its secret,
// which is shown once and never stored.
func NewKey(entity string, role Role, userID string, now time.Time) (Key, string, error) {
	if entity != AllEntities && !entityName.MatchString(entity) {
		return Key{}, "", fmt.Errorf("entity %q: use 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit", entity)
	}
	if _, err := ParseRole(string(role)); err != nil {
		return Key{}, "", err
	}
	body, err := randomString(40)
	if err != nil {
		return Key{}, "", err
	}
	id, err := randomString(12)
	if err != nil {
		return Key{}, "", err
	}
	if userID == "" {
		userID = "user-" + id
	}
	secret := KeyPrefix + body
	k := Key{ID: "key_" + id, Hash: HashKey(secret), UserID: userID, Entity: entity, Role: role, CreatedAt: now.UTC()}
	return k, secret, nil
}

// StoreVerifier verifies keys against a KeyStore.
type StoreVerifier struct {
	Store KeyStore
}

// Verify implements Verifier.
func (v StoreVerifier) Verify(ctx context.Context, secret string) (Principal, error) {
	if secret == "" {
		return Principal{}, ErrUnauthenticated
	}
	k, err := v.Store.KeyByHash(ctx, HashKey(secret))
	if errors.Is(err, ErrKeyNotFound) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("verify key: %w", err)
	}
	if k.RevokedAt != nil {
		return Principal{}, ErrUnauthenticated
	}
	return k.Principal(), nil
}
