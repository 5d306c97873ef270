package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateWebhook implements storage.WebhookStore.
func (s *Store) CreateWebhook(ctx context.Context, w storage.Webhook) error {
	defer s.entityLock(w.Entity)()
	if err := s.checkWebhook(ctx, w); err != nil {
		return err
	}
	return s.insertWebhook(ctx, w, false)
}

// UpdateWebhook implements storage.WebhookStore.
func (s *Store) UpdateWebhook(ctx context.Context, w storage.Webhook) error {
	defer s.entityLock(w.Entity)()
	old, err := s.GetWebhook(ctx, w.Entity, w.ID)
	if err != nil {
		return err
	}
	if err := s.checkWebhook(ctx, w); err != nil {
		return err
	}
	w.CreatedAt = old.CreatedAt
	return s.insertWebhook(ctx, w, false)
}

func (s *Store) checkWebhook(ctx context.Context, w storage.Webhook) error {
	taken, err := s.stringColumn(ctx, "webhook names", "SELECT id FROM automation_webhooks FINAL WHERE entity = {entity:String} "+
		"AND name = {name:String} AND id <> {id:String} AND NOT deleted",
		clickhouse.Named("entity", w.Entity), clickhouse.Named("name", w.Name), clickhouse.Named("id", w.ID))
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return fmt.Errorf("webhook name %q is taken in entity %q (id %s); choose another name: %w",
			w.Name, w.Entity, taken[0], storage.ErrConflict)
	}
	return s.checkSecrets(ctx, w.Entity, w.AccessTokenSecret, w.SigningSecret)
}

func (s *Store) insertWebhook(ctx context.Context, w storage.Webhook, deleted bool) error {
	return s.insertBatch(ctx, "automation_webhooks", storekit.WebhookColumns+", version, deleted", 1, func(int) []any {
		return []any{w.Entity, w.ID, w.Name, w.URL, w.AccessTokenSecret, w.SigningSecret, w.CreatedAt.UTC(), w.UpdatedAt.UTC(),
			utcPtr(w.FailingSince), utcPtr(w.DisabledAt), w.DisabledReason, s.versions.next(0), flag(deleted)}
	})
}

// GetWebhook implements storage.WebhookStore.
func (s *Store) GetWebhook(ctx context.Context, entity, id string) (storage.Webhook, error) {
	ws, err := s.readWebhooks(ctx, "entity = {entity:String} AND id = {id:String}",
		clickhouse.Named("entity", entity), clickhouse.Named("id", id))
	return storekit.First(ws, err, fmt.Sprintf("webhook %q does not exist in entity %q", id, entity))
}

// ListWebhooks implements storage.WebhookStore.
func (s *Store) ListWebhooks(ctx context.Context, entity string) ([]storage.Webhook, error) {
	return s.readWebhooks(ctx, "entity = {entity:String}", clickhouse.Named("entity", entity))
}

func (s *Store) readWebhooks(ctx context.Context, where string, args ...any) ([]storage.Webhook, error) {
	out := []storage.Webhook{}
	err := s.eachRow(ctx, "read webhooks", "SELECT "+storekit.WebhookColumns+" FROM automation_webhooks FINAL WHERE "+where+
		" AND NOT deleted ORDER BY name", func(rows driver.Rows) error {
		var w storage.Webhook
		if err := rows.Scan(&w.Entity, &w.ID, &w.Name, &w.URL, &w.AccessTokenSecret, &w.SigningSecret, &w.CreatedAt,
			&w.UpdatedAt, &w.FailingSince, &w.DisabledAt, &w.DisabledReason); err != nil {
			return err
		}
		w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
		w.FailingSince, w.DisabledAt = utcPtr(w.FailingSince), utcPtr(w.DisabledAt)
		out = append(out, w)
		return nil
	}, args...)
	return out, err
}

// DeleteWebhook implements storage.WebhookStore.
func (s *Store) DeleteWebhook(ctx context.Context, entity, id string) error {
	defer s.entityLock(entity)()
	users, err := s.stringColumn(ctx, "webhook users", "SELECT concat(project_id, ':', name) AS n FROM automations FINAL "+
		"WHERE startsWith(project_id, {prefix:String}) AND webhook_id = {id:String} AND NOT deleted ORDER BY n",
		clickhouse.Named("prefix", entity+"/"), clickhouse.Named("id", id))
	if err != nil {
		return err
	}
	if err := storekit.InUse(fmt.Sprintf("webhook %q", id), users, "delete those automations or point them at another webhook first"); err != nil {
		return err
	}
	w, err := s.GetWebhook(ctx, entity, id)
	if err != nil {
		return err
	}
	return s.insertWebhook(ctx, w, true)
}

// SetWebhookHealth implements storage.WebhookStore.
func (s *Store) SetWebhookHealth(ctx context.Context, entity, id string, h storage.WebhookHealth) error {
	defer s.entityLock(entity)()
	w, err := s.GetWebhook(ctx, entity, id)
	if err != nil {
		return err
	}
	w.WebhookHealth = h
	return s.insertWebhook(ctx, w, false)
}
