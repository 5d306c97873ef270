package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.AutomationsBackend = (*Store)(nil)

// PutSecret implements storage.SecretStore.
func (s *Store) PutSecret(ctx context.Context, sec storage.Secret) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO automation_secrets (entity, name, sealed, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (entity, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
			sec.Entity, sec.Name, sec.Sealed, sec.CreatedAt, sec.UpdatedAt)
		if err != nil {
			return fmt.Errorf("put secret %s: %w", sec.Name, err)
		}
		return nil
	})
}

// GetSecret implements storage.SecretStore.
func (s *Store) GetSecret(ctx context.Context, entity, name string) (storage.Secret, error) {
	sec := storage.Secret{Entity: entity, Name: name}
	err := s.db.QueryRowContext(ctx, `SELECT sealed, created_at, updated_at FROM automation_secrets
		WHERE entity = ? AND name = ?`, entity, name).Scan(&sec.Sealed, &sec.CreatedAt, &sec.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return sec, fmt.Errorf("secret %q does not exist in entity %q: %w", name, entity, storage.ErrNotFound)
	}
	if err != nil {
		return sec, fmt.Errorf("read secret %s: %w", name, err)
	}
	return utcSecret(sec), nil
}

// ListSecrets implements storage.SecretStore.
func (s *Store) ListSecrets(ctx context.Context, entity string) ([]storage.Secret, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, created_at, updated_at FROM automation_secrets
		WHERE entity = ? ORDER BY name`, entity)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	defer rows.Close()
	out := []storage.Secret{}
	for rows.Next() {
		sec := storage.Secret{Entity: entity}
		if err := rows.Scan(&sec.Name, &sec.CreatedAt, &sec.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list secrets: %w", err)
		}
		out = append(out, utcSecret(sec))
	}
	return out, rows.Err()
}

// DeleteSecret implements storage.SecretStore.
func (s *Store) DeleteSecret(ctx context.Context, entity, name string) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		users, err := queryNames(ctx, tx, `SELECT name FROM automation_webhooks WHERE entity = ?
			AND (access_token_secret = ? OR signing_secret = ?) ORDER BY name`, entity, name, name)
		if err != nil {
			return err
		}
		if err := storekit.InUse(fmt.Sprintf("secret %q", name), users, "change or delete those webhooks first"); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM automation_secrets WHERE entity = ? AND name = ?`, entity, name)
		return expectOne(res, err, fmt.Sprintf("secret %q does not exist in entity %q", name, entity))
	})
}

// checkSecrets refuses secret names the entity does not have.
func checkSecrets(ctx context.Context, tx *sql.Tx, entity string, secretNames ...string) error {
	for _, n := range secretNames {
		if n == "" {
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM automation_secrets WHERE entity = ? AND name = ?`, entity, n).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("secret %q does not exist in entity %q; create it with /secrets/create first: %w",
				n, entity, storage.ErrInvalidArgument)
		}
		if err != nil {
			return fmt.Errorf("check secret %s: %w", n, err)
		}
	}
	return nil
}

// queryNames runs a one-column query inside tx.
func queryNames(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query names: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// expectOne turns a statement's outcome into ErrNotFound, with the
// message given, when it touched no row.
func expectOne(res sql.Result, err error, notFound string) error {
	if err != nil {
		return fmt.Errorf("automations write: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("automations write: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", notFound, storage.ErrNotFound)
	}
	return nil
}

func utcSecret(s storage.Secret) storage.Secret {
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s
}
