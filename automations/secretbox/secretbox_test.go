package secretbox

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeyBytes)
	box, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal([]byte("hunter2"), "acme/TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("sealed value holds the plain text")
	}
	again, _ := box.Seal([]byte("hunter2"), "acme/TOKEN")
	if bytes.Equal(sealed, again) {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	if plain, err := box.Open(sealed, "acme/TOKEN"); err != nil || string(plain) != "hunter2" {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	other, _ := New(bytes.Repeat([]byte{8}, KeyBytes))
	tampered := append([]byte{}, sealed...)
	tampered[len(tampered)-1] ^= 1
	tests := []struct {
		name    string
		box     *Box
		sealed  []byte
		context string
	}{
		{"other key", other, sealed, "acme/TOKEN"},
		{"moved to another row", box, sealed, "rival/TOKEN"},
		{"altered", box, tampered, "acme/TOKEN"},
		{"truncated", box, sealed[:10], "acme/TOKEN"},
		{"empty", box, nil, "acme/TOKEN"},
	}
	for _, tc := range tests {
		if _, err := tc.box.Open(tc.sealed, tc.context); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: Open = %v, want ErrOpen", tc.name, err)
		}
	}
	if _, err := New([]byte("short")); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sub", "secrets.key")
	noEnv := func(string) string { return "" }
	key, source, err := LoadKey(noEnv, file)
	if err != nil || len(key) != KeyBytes || !strings.Contains(source, "created") {
		t.Fatalf("first load = %d bytes from %q, %v", len(key), source, err)
	}
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", info.Mode(), err)
	}
	again, source, err := LoadKey(noEnv, file)
	if err != nil || !bytes.Equal(again, key) || source != file {
		t.Fatalf("second load = %q from %q, %v; want the same key from the file", again, source, err)
	}
	envKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, KeyBytes))
	fromEnv, source, err := LoadKey(func(string) string { return envKey }, file)
	if err != nil || fromEnv[0] != 1 || source != EnvKey {
		t.Fatalf("env key = %v from %q, %v", fromEnv, source, err)
	}
	if _, _, err := LoadKey(func(string) string { return "c2hvcnQ=" }, file); err == nil || !strings.Contains(err.Error(), EnvKey) {
		t.Fatalf("a short env key = %v, want an error naming %s", err, EnvKey)
	}
	bad := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(bad, []byte("not base64!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadKey(noEnv, bad); err == nil || !strings.Contains(err.Error(), "secrets_key_file") {
		t.Fatalf("a bad key file = %v", err)
	}
}

// TestLoadKeyRace starts several loaders on a missing file at once: all
// must end with the same key.
func TestLoadKeyRace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secrets.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, _, err := LoadKey(func(string) string { return "" }, file)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) {
			t.Fatal("concurrent first starts ended with different keys")
		}
	}
}
