package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKeyFromHeader(t *testing.T) {
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name    string
		headers map[string]string
		want    string
		ok      bool
	}{
		{"bearer", map[string]string{"Authorization": "Bearer k1"}, "k1", true},
		{"bearer lowercase scheme", map[string]string{"Authorization": "bearer k1"}, "k1", true},
		{"basic api user", map[string]string{"Authorization": basic("api:k2")}, "k2", true},
		{"basic other user", map[string]string{"Authorization": basic("me:k3")}, "k3", true},
		{"wandb-api-key", map[string]string{"wandb-api-key": "k4"}, "k4", true},
		{"wandb-api-key wins", map[string]string{"wandb-api-key": "k4", "Authorization": "Bearer k1"}, "k4", true},
		{"none", map[string]string{}, "", false},
		{"basic not base64", map[string]string{"Authorization": "Basic !!!"}, "", false},
		{"basic without colon", map[string]string{"Authorization": basic("nokey")}, "", false},
		{"unknown scheme", map[string]string{"Authorization": "Digest x"}, "", false},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			got, ok := KeyFromHeader(h)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("KeyFromHeader = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	tests := []struct {
		name    string
		p       Principal
		project string
		need    Access
		want    error
	}{
		{"member writes own entity", Principal{Entity: "acme", Role: RoleMember}, "acme/p", Write, nil},
		{"viewer reads", Principal{Entity: "acme", Role: RoleViewer}, "acme/p", Read, nil},
		{"viewer cannot write", Principal{Entity: "acme", Role: RoleViewer}, "acme/p", Write, ErrForbidden},
		{"other entity", Principal{Entity: "acme", Role: RoleAdmin}, "evil/p", Read, ErrForbidden},
		{"instance admin", Principal{Entity: AllEntities, Role: RoleAdmin}, "any/p", Write, nil},
		{"bad project id", Principal{Entity: "acme", Role: RoleAdmin}, "acme", Read, ErrBadProjectID},
		{"nested project id", Principal{Entity: "acme", Role: RoleAdmin}, "acme/p/x", Read, ErrBadProjectID},
		{"empty entity", Principal{Entity: "acme", Role: RoleAdmin}, "/p", Read, ErrBadProjectID},
		{"NUL in the project", Principal{Entity: "acme", Role: RoleAdmin}, "acme/p\x00", Read, ErrBadProjectID},
		{"space in the project", Principal{Entity: "acme", Role: RoleAdmin}, "acme/my project", Read, ErrBadProjectID},
		{"dot-dot project", Principal{Entity: "acme", Role: RoleAdmin}, "acme/..", Read, ErrBadProjectID},
		{"dot project", Principal{Entity: "acme", Role: RoleAdmin}, "acme/.", Read, ErrBadProjectID},
		{"dot-dot inside", Principal{Entity: "acme", Role: RoleAdmin}, "acme/a..b", Read, ErrBadProjectID},
		{"dot-dot entity", Principal{Entity: AllEntities, Role: RoleAdmin}, "../p", Read, ErrBadProjectID},
		{"backslash entity", Principal{Entity: AllEntities, Role: RoleAdmin}, "\\evil.example/p", Read, ErrBadProjectID},
		{"newline in the entity", Principal{Entity: AllEntities, Role: RoleAdmin}, "ac\nme/p", Read, ErrBadProjectID},
		{"instance key's entity is no name", Principal{Entity: AllEntities, Role: RoleAdmin}, "*/p", Read, ErrBadProjectID},
		{"names with dots, dashes and underscores", Principal{Entity: "my-team_1", Role: RoleMember}, "my-team_1/v1.2_eval-set", Write, nil},
		{"registry project", Principal{Entity: "acme", Role: RoleMember}, "acme/wandb-registry-model", Read, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Authorize(tc.project, tc.need)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Authorize = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFileStoreSharedBetweenInstances(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	server, cli := NewFileStore(dir), NewFileStore(dir)
	server.reloadEvery = 0
	k, secret, err := NewKey("acme", RoleMember, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) != len(KeyPrefix)+40 {
		t.Fatalf("secret %q has the wrong form", secret)
	}
	v := StoreVerifier{Store: server}
	if _, err := v.Verify(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("unknown key verified: %v", err)
	}
	if err := cli.PutKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(ctx, secret)
	if err != nil || p.Entity != "acme" || p.Role != RoleMember {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
	if err := cli.RevokeKey(ctx, k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("revoked key verified: %v", err)
	}
	if err := cli.RevokeKey(ctx, "key_missing", time.Now()); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("revoke unknown = %v", err)
	}
	st, err := os.Stat(filepath.Join(dir, KeysFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v", st.Mode().Perm(), err)
	}
	body, _ := os.ReadFile(filepath.Join(dir, KeysFile))
	if strings.Contains(string(body), secret) {
		t.Fatal("key file contains the plaintext secret")
	}
}

// TestFileStoreSeesANewKeyAtOnce: a key created by another process is
// accepted on its first request, however soon after the server last
// read the file (the README's quick start makes one and uses it at once).
func TestFileStoreSeesANewKeyAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	server, cli := NewFileStore(dir), NewFileStore(dir)
	server.reloadEvery = time.Hour
	k, secret, err := NewKey("acme", RoleMember, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v := StoreVerifier{Store: server}
	if _, err := v.Verify(ctx, secret); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("unknown key verified: %v", err)
	}
	if err := cli.PutKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if p, err := v.Verify(ctx, secret); err != nil || p.Entity != "acme" {
		t.Fatalf("a key made after the last reload: Verify = %+v, %v", p, err)
	}
}

func TestEnsureAdminKeyOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := NewFileStore(dir)
	secret, err := EnsureAdminKey(ctx, store, dir, time.Now())
	if err != nil || secret == "" {
		t.Fatalf("first EnsureAdminKey = %q, %v", secret, err)
	}
	again, err := EnsureAdminKey(ctx, store, dir, time.Now())
	if err != nil || again != "" {
		t.Fatalf("second EnsureAdminKey = %q, %v; want no new key", again, err)
	}
	st, err := os.Stat(filepath.Join(dir, AdminKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin key file mode = %v, %v", st.Mode().Perm(), err)
	}
	p, err := StoreVerifier{Store: store}.Verify(ctx, secret)
	if err != nil || p.Entity != AllEntities || p.Role != RoleAdmin {
		t.Fatalf("admin principal = %+v, %v", p, err)
	}
}

func TestNewKeyValidates(t *testing.T) {
	for _, entity := range []string{"", "a/b", "-x", strings.Repeat("a", 200)} {
		if _, _, err := NewKey(entity, RoleMember, "", time.Now()); err == nil {
			t.Errorf("entity %q accepted", entity)
		}
	}
	if _, _, err := NewKey("ok", Role("owner"), "", time.Now()); err == nil {
		t.Error("role owner accepted")
	}
}
