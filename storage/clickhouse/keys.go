package clickhouse

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/weftdev/weft/auth"
)

var _ auth.KeyStore = (*Store)(nil)

const keyColumns = "id, hash, user_id, entity, role, created_at, revoked_at, version"

// keyCache holds every key by hash. Request authentication looks keys up
// here; the table is read again at most once per Options.KeyRefresh, so
// neither traffic nor unknown keys turn into a query per request.
type keyCache struct {
	mu     sync.Mutex
	byHash map[string]auth.Key
	loaded time.Time // zero: reload on the next lookup
}

// invalidate makes the next lookup reload; the old keys stay as the
// fallback if that reload fails.
func (c *keyCache) invalidate() {
	c.mu.Lock()
	c.loaded = time.Time{}
	c.mu.Unlock()
}

// PutKey implements auth.KeyStore.
func (s *Store) PutKey(ctx context.Context, k auth.Key) error {
	defer s.keys.invalidate()
	return s.insertKey(ctx, k, 0)
}

// KeyByHash implements auth.KeyStore. If the table cannot be read, the
// keys read last keep answering until it can: an outage then neither locks
// everyone out nor makes every request wait for a failing query.
func (s *Store) KeyByHash(ctx context.Context, hash string) (auth.Key, error) {
	c := &s.keys
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := s.opts.Now(); c.loaded.IsZero() || now.Sub(c.loaded) >= s.opts.KeyRefresh {
		keys, _, err := s.readKeys(ctx, "")
		switch {
		case err == nil:
			c.byHash = make(map[string]auth.Key, len(keys))
			for _, k := range keys {
				c.byHash[k.Hash] = k
			}
		case c.byHash == nil:
			return auth.Key{}, err
		default:
			s.logger.Warn("api keys: reload failed; the keys read before stay in use (new keys are unknown, revoked ones still work) until a reload succeeds; check that ClickHouse (clickhouse_dsn) is reachable", "err", err)
		}
		c.loaded = now
	}
	k, ok := c.byHash[hash]
	if !ok {
		return auth.Key{}, auth.ErrKeyNotFound
	}
	return k, nil
}

// ListKeys implements auth.KeyStore, oldest first.
func (s *Store) ListKeys(ctx context.Context) ([]auth.Key, error) {
	keys, _, err := s.readKeys(ctx, "")
	return keys, err
}

// RevokeKey implements auth.KeyStore. Revoking a revoked key keeps the
// first revocation time.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	defer s.keys.invalidate()
	keys, versions, err := s.readKeys(ctx, id)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: no key with id %q (see `weft keys list`)", auth.ErrKeyNotFound, id)
	}
	k := keys[0]
	if k.RevokedAt != nil {
		return nil
	}
	t := at.UTC()
	k.RevokedAt = &t
	return s.insertKey(ctx, k, versions[0])
}

// insertKey writes a version of k above after.
func (s *Store) insertKey(ctx context.Context, k auth.Key, after uint64) error {
	err := s.conn.Exec(ctx, "INSERT INTO api_keys ("+keyColumns+") VALUES ({id:String}, {hash:String}, "+
		"{user:String}, {entity:String}, {role:String}, {created:DateTime64(9, 'UTC')}, "+
		"{revoked:Nullable(DateTime64(9, 'UTC'))}, {version:UInt64})",
		clickhouse.Named("id", k.ID), clickhouse.Named("hash", k.Hash), clickhouse.Named("user", k.UserID),
		clickhouse.Named("entity", k.Entity), clickhouse.Named("role", string(k.Role)),
		clickhouse.Named("created", k.CreatedAt.UTC()), clickhouse.Named("revoked", k.RevokedAt),
		clickhouse.Named("version", s.versions.next(after)))
	return wrapErr("write key "+k.ID, err)
}

// readKeys reads the current version of every key, or of the key with id
// when id is set, with the versions they were read at.
func (s *Store) readKeys(ctx context.Context, id string) ([]auth.Key, []uint64, error) {
	q := "SELECT " + keyColumns + " FROM api_keys FINAL"
	var args []any
	if id != "" {
		q += " WHERE id = {id:String}"
		args = append(args, clickhouse.Named("id", id))
	}
	rows, err := s.conn.Query(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, nil, wrapErr("read keys", err)
	}
	defer rows.Close()
	var (
		keys     []auth.Key
		versions []uint64
	)
	for rows.Next() {
		var (
			k    auth.Key
			role string
			v    uint64
		)
		if err := rows.Scan(&k.ID, &k.Hash, &k.UserID, &k.Entity, &role, &k.CreatedAt, &k.RevokedAt, &v); err != nil {
			return nil, nil, wrapErr("read keys", err)
		}
		k.Role, k.CreatedAt, k.RevokedAt = auth.Role(role), k.CreatedAt.UTC(), utcPtr(k.RevokedAt)
		keys, versions = append(keys, k), append(versions, v)
	}
	return keys, versions, wrapErr("read keys", rows.Err())
}
