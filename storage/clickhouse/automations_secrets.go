package clickhouse

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.AutomationsBackend = (*Store)(nil)

// The automations tables are small and read with FINAL; reference checks
// and unique names are read-then-insert under a per-entity lock, so they
// hold within a process (as object writes do, see README).

const secretColumns = "entity, name, sealed, created_at, updated_at, version, deleted"

// entityLock serialises an entity's automations writes in this process.
func (s *Store) entityLock(entity string) func() {
	return s.projects.lock([]string{"automations:" + entity})
}

// PutSecret implements storage.SecretStore.
func (s *Store) PutSecret(ctx context.Context, sec storage.Secret) error {
	defer s.entityLock(sec.Entity)()
	old, err := s.GetSecret(ctx, sec.Entity, sec.Name)
	if err == nil {
		sec.CreatedAt = old.CreatedAt
	}
	return s.insertSecret(ctx, sec, false)
}

func (s *Store) insertSecret(ctx context.Context, sec storage.Secret, deleted bool) error {
	return s.insertBatch(ctx, "automation_secrets", secretColumns, 1, func(int) []any {
		return []any{sec.Entity, sec.Name, base64.StdEncoding.EncodeToString(sec.Sealed), sec.CreatedAt.UTC(),
			sec.UpdatedAt.UTC(), s.versions.next(0), flag(deleted)}
	})
}

// GetSecret implements storage.SecretStore.
func (s *Store) GetSecret(ctx context.Context, entity, name string) (storage.Secret, error) {
	list, err := s.readSecrets(ctx, "entity = {entity:String} AND name = {name:String}",
		clickhouse.Named("entity", entity), clickhouse.Named("name", name))
	return storekit.First(list, err, fmt.Sprintf("secret %q does not exist in entity %q", name, entity))
}

// ListSecrets implements storage.SecretStore.
func (s *Store) ListSecrets(ctx context.Context, entity string) ([]storage.Secret, error) {
	list, err := s.readSecrets(ctx, "entity = {entity:String}", clickhouse.Named("entity", entity))
	for i := range list {
		list[i].Sealed = nil
	}
	return list, err
}

func (s *Store) readSecrets(ctx context.Context, where string, args ...any) ([]storage.Secret, error) {
	out := []storage.Secret{}
	err := s.eachRow(ctx, "read secrets", "SELECT entity, name, sealed, created_at, updated_at FROM automation_secrets FINAL WHERE "+
		where+" AND NOT deleted ORDER BY name", func(rows driver.Rows) error {
		var sec storage.Secret
		var sealed string
		if err := rows.Scan(&sec.Entity, &sec.Name, &sealed, &sec.CreatedAt, &sec.UpdatedAt); err != nil {
			return err
		}
		b, err := base64.StdEncoding.DecodeString(sealed)
		sec.Sealed, sec.CreatedAt, sec.UpdatedAt = b, sec.CreatedAt.UTC(), sec.UpdatedAt.UTC()
		out = append(out, sec)
		return err
	}, args...)
	return out, err
}

// DeleteSecret implements storage.SecretStore.
func (s *Store) DeleteSecret(ctx context.Context, entity, name string) error {
	defer s.entityLock(entity)()
	users, err := s.stringColumn(ctx, "secret users", "SELECT name FROM automation_webhooks FINAL WHERE entity = {entity:String} "+
		"AND (access_token_secret = {name:String} OR signing_secret = {name:String}) AND NOT deleted ORDER BY name",
		clickhouse.Named("entity", entity), clickhouse.Named("name", name))
	if err != nil {
		return err
	}
	if err := storekit.InUse(fmt.Sprintf("secret %q", name), users, "change or delete those webhooks first"); err != nil {
		return err
	}
	sec, err := s.GetSecret(ctx, entity, name)
	if err != nil {
		return err
	}
	return s.insertSecret(ctx, sec, true)
}

// checkSecrets refuses secret names the entity does not have.
func (s *Store) checkSecrets(ctx context.Context, entity string, names ...string) error {
	for _, n := range names {
		if n == "" {
			continue
		}
		_, err := s.GetSecret(ctx, entity, n)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err != nil {
			return fmt.Errorf("secret %q does not exist in entity %q; create it with /secrets/create first: %w",
				n, entity, storage.ErrInvalidArgument)
		}
	}
	return nil
}

func flag(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
