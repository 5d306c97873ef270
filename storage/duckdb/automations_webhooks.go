package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateWebhook implements storage.WebhookStore.
func (s *Store) CreateWebhook(ctx context.Context, w storage.Webhook) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkWebhook(ctx, tx, w); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO automation_webhooks (`+storekit.WebhookColumns+`) VALUES (`+qmarks(11)+`)`,
			w.Entity, w.ID, w.Name, w.URL, w.AccessTokenSecret, w.SigningSecret, w.CreatedAt, w.UpdatedAt,
			nullTimePtr(w.FailingSince), nullTimePtr(w.DisabledAt), w.DisabledReason)
		if err != nil {
			return fmt.Errorf("create webhook %s: %w", w.Name, err)
		}
		return nil
	})
}

// UpdateWebhook implements storage.WebhookStore.
func (s *Store) UpdateWebhook(ctx context.Context, w storage.Webhook) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkWebhook(ctx, tx, w); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE automation_webhooks SET name = ?, url = ?, access_token_secret = ?,
			signing_secret = ?, updated_at = ?, failing_since = ?, disabled_at = ?, disabled_reason = ?
			WHERE entity = ? AND id = ?`, w.Name, w.URL, w.AccessTokenSecret, w.SigningSecret, w.UpdatedAt,
			nullTimePtr(w.FailingSince), nullTimePtr(w.DisabledAt), w.DisabledReason, w.Entity, w.ID)
		return expectOne(res, err, fmt.Sprintf("webhook %q does not exist in entity %q", w.ID, w.Entity))
	})
}

// checkWebhook refuses a name another webhook of the entity has and
// secrets the entity does not have.
func checkWebhook(ctx context.Context, tx *sql.Tx, w storage.Webhook) error {
	taken, err := queryNames(ctx, tx, `SELECT id FROM automation_webhooks WHERE entity = ? AND name = ? AND id <> ?`,
		w.Entity, w.Name, w.ID)
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return fmt.Errorf("webhook name %q is taken in entity %q (id %s); choose another name: %w",
			w.Name, w.Entity, taken[0], storage.ErrConflict)
	}
	return checkSecrets(ctx, tx, w.Entity, w.AccessTokenSecret, w.SigningSecret)
}

// GetWebhook implements storage.WebhookStore.
func (s *Store) GetWebhook(ctx context.Context, entity, id string) (storage.Webhook, error) {
	ws, err := s.webhooks(ctx, "entity = ? AND id = ?", entity, id)
	return storekit.First(ws, err, fmt.Sprintf("webhook %q does not exist in entity %q", id, entity))
}

// ListWebhooks implements storage.WebhookStore.
func (s *Store) ListWebhooks(ctx context.Context, entity string) ([]storage.Webhook, error) {
	return s.webhooks(ctx, "entity = ?", entity)
}

func (s *Store) webhooks(ctx context.Context, where string, args ...any) ([]storage.Webhook, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.WebhookColumns+` FROM automation_webhooks WHERE `+where+` ORDER BY name`, args...)
	if err != nil {
		return nil, fmt.Errorf("read webhooks: %w", err)
	}
	defer rows.Close()
	out := []storage.Webhook{}
	for rows.Next() {
		var w storage.Webhook
		var failing, disabled sql.NullTime
		if err := rows.Scan(&w.Entity, &w.ID, &w.Name, &w.URL, &w.AccessTokenSecret, &w.SigningSecret,
			&w.CreatedAt, &w.UpdatedAt, &failing, &disabled, &w.DisabledReason); err != nil {
			return nil, fmt.Errorf("read webhooks: %w", err)
		}
		w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
		w.FailingSince, w.DisabledAt = timePtr(failing), timePtr(disabled)
		out = append(out, w)
	}
	return out, rows.Err()
}

// DeleteWebhook implements storage.WebhookStore.
func (s *Store) DeleteWebhook(ctx context.Context, entity, id string) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		users, err := queryNames(ctx, tx, `SELECT project_id || ':' || name FROM automations
			WHERE starts_with(project_id, ?) AND webhook_id = ? ORDER BY 1`, entity+"/", id)
		if err != nil {
			return err
		}
		if err := storekit.InUse(fmt.Sprintf("webhook %q", id), users, "delete those automations or point them at another webhook first"); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM automation_webhooks WHERE entity = ? AND id = ?`, entity, id)
		return expectOne(res, err, fmt.Sprintf("webhook %q does not exist in entity %q", id, entity))
	})
}

// SetWebhookHealth implements storage.WebhookStore.
func (s *Store) SetWebhookHealth(ctx context.Context, entity, id string, h storage.WebhookHealth) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE automation_webhooks SET failing_since = ?, disabled_at = ?, disabled_reason = ?
			WHERE entity = ? AND id = ?`, nullTimePtr(h.FailingSince), nullTimePtr(h.DisabledAt), h.DisabledReason, entity, id)
		return expectOne(res, err, fmt.Sprintf("webhook %q does not exist in entity %q", id, entity))
	})
}

// errNoRows maps sql.ErrNoRows to ErrNotFound with msg.
func errNoRows(err error, msg string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", msg, storage.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", msg, err)
	}
	return nil
}
