package clickhouse

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
)

// fakeClock is a settable Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newKey(t *testing.T, entity string, at time.Time) (auth.Key, string) {
	t.Helper()
	k, secret, err := auth.NewKey(entity, auth.RoleMember, "", at)
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

func TestKeysRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{})
	created := time.Date(2025, 2, 3, 4, 5, 6, 789012345, time.UTC)
	a, _ := newKey(t, "acme", created)
	b, _ := newKey(t, "beta", created.Add(time.Second))
	for _, k := range []auth.Key{b, a} {
		if err := s.PutKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.KeyByHash(ctx, a.Hash)
	if err != nil || got != a {
		t.Fatalf("KeyByHash = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.KeyByHash(ctx, "nope"); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Errorf("unknown hash: %v; want ErrKeyNotFound", err)
	}
	revoked := created.Add(time.Hour)
	if err := s.RevokeKey(ctx, a.ID, revoked); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, a.ID, revoked.Add(time.Hour)); err != nil {
		t.Fatalf("second revoke: %v", err)
	}
	if err := s.RevokeKey(ctx, "key_missing", revoked); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Errorf("revoke unknown id: %v; want ErrKeyNotFound", err)
	}
	list, err := s.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := []string{list[0].ID, list[1].ID}; len(list) != 2 || !slices.Equal(ids, []string{a.ID, b.ID}) {
		t.Fatalf("ListKeys = %+v; want a then b", list)
	}
	if r := list[0].RevokedAt; r == nil || !r.Equal(revoked) {
		t.Errorf("revoked_at = %v; want the first revocation %v", r, revoked)
	}
	if list[1].RevokedAt != nil {
		t.Errorf("b revoked: %v", list[1].RevokedAt)
	}
}

// TestKeysSharedBetweenStores checks that a key created or revoked by one
// process reaches another's request checks after KeyRefresh.
func TestKeysSharedBetweenStores(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	clock := &fakeClock{t: time.Now()}
	open := func() *Store {
		s, err := Open(ctx, dsn, Options{Now: clock.now, KeyRefresh: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	server, cli := open(), open()
	if err := server.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	verify := auth.StoreVerifier{Store: server}
	k, secret := newKey(t, "acme", clock.now())
	if _, err := verify.Verify(ctx, secret); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("before creation: %v", err)
	}
	if err := cli.PutKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Verify(ctx, secret); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("within the refresh interval the cached answer stands: %v", err)
	}
	clock.advance(time.Second)
	p, err := verify.Verify(ctx, secret)
	if err != nil || p.Entity != "acme" || p.KeyID != k.ID {
		t.Fatalf("after refresh: %+v, %v", p, err)
	}
	if err := cli.RevokeKey(ctx, k.ID, clock.now()); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Second)
	if _, err := verify.Verify(ctx, secret); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("revoked key still accepted: %v", err)
	}
}

// TestKeyLookupSurvivesOutage: once loaded, keys keep answering while the
// table cannot be read; without them the error says "unavailable".
func TestKeyLookupSurvivesOutage(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Now()}
	s := openTestStore(t, Options{Now: clock.now})
	k, _ := newKey(t, "acme", clock.now())
	if err := s.PutKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyByHash(ctx, k.Hash); err != nil {
		t.Fatal(err)
	}
	if err := s.conn.Close(); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	if got, err := s.KeyByHash(ctx, k.Hash); err != nil || got.ID != k.ID {
		t.Fatalf("during the outage: %+v, %v; want the cached key", got, err)
	}
	s.keys.byHash = nil
	s.keys.invalidate()
	if _, err := s.KeyByHash(ctx, k.Hash); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("no cache and no server: %v; want ErrUnavailable", err)
	}
}
