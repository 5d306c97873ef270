// Package secretbox seals automation secrets, and delivery bodies that may
// hold them, with AES-256-GCM under one key: from the WEFT_SECRETS_KEY
// environment variable (base64 of 32 bytes), or from a key file that is
// created with mode 0600 on first start. A sealed value is bound to what
// it belongs to (entity and name, or delivery id), so a sealed value
// moved to another row does not open.
//
// It imports nothing of the project.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvKey is the environment variable that holds the key.
const EnvKey = "WEFT_SECRETS_KEY"

// KeyBytes is the key length (AES-256).
const KeyBytes = 32

// version leads every sealed value, so the format can change later.
const version = 1

// ErrOpen is a sealed value this key cannot open: another key sealed it,
// or it was altered or moved.
var ErrOpen = errors.New("sealed value does not open with this process's secrets key; every weft process sharing the store needs the same key (WEFT_SECRETS_KEY or automations.secrets_key_file)")

// Box seals and opens values.
type Box struct {
	aead cipher.AEAD
}

// New makes a Box from a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeyBytes {
		return nil, fmt.Errorf("secrets key is %d bytes; it must be %d", len(key), KeyBytes)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain, bound to context.
func (b *Box) Seal(plain []byte, context string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), 1+b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plain, []byte(context)), nil
}

// Open decrypts what Seal made for the same context; ErrOpen otherwise.
func (b *Box) Open(sealed []byte, context string) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(sealed) < 1+ns+b.aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], []byte(context))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// LoadKey returns the key: the environment's value when set, else the
// key file's, creating the file with a new random key when it is missing.
// It says where the key came from, for the start-up log.
func LoadKey(getenv func(string) string, keyFile string) (key []byte, source string, err error) {
	if v := strings.TrimSpace(getenv(EnvKey)); v != "" {
		key, err := decodeKey(v)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvKey, err)
		}
		return key, EnvKey, nil
	}
	raw, err := os.ReadFile(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return createKeyFile(keyFile)
	}
	if err != nil {
		return nil, "", fmt.Errorf("automations.secrets_key_file: %w", err)
	}
	key, err = decodeKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, "", fmt.Errorf("automations.secrets_key_file %s: %w", keyFile, err)
	}
	return key, keyFile, nil
}

func decodeKey(text string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(key) != KeyBytes {
		return nil, fmt.Errorf("want base64 of %d random bytes (e.g. `head -c32 /dev/urandom | base64`)", KeyBytes)
	}
	return key, nil
}

// createKeyFile writes a new key with mode 0600. It is written whole to
// a temporary file and linked into place, so a process starting at the
// same moment reads either no file or the complete key, and the loser of
// the race takes the winner's key.
func createKeyFile(path string) ([]byte, string, error) {
	key := make([]byte, KeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("new secrets key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("automations.secrets_key_file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".secrets-key-*")
	if err != nil {
		return nil, "", fmt.Errorf("automations.secrets_key_file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return nil, "", fmt.Errorf("write secrets key %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return LoadKey(func(string) string { return "" }, path)
	} else if err != nil {
		return nil, "", fmt.Errorf("automations.secrets_key_file: %w", err)
	}
	return key, path + " (created)", nil
}
