package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateAutomation implements storage.AutomationStore.
func (s *Store) CreateAutomation(ctx context.Context, a storage.Automation) error {
	entity, _, _ := strings.Cut(a.ProjectID, "/")
	defer s.entityLock(entity)()
	if err := s.checkAutomation(ctx, entity, a); err != nil {
		return err
	}
	return s.insertAutomation(ctx, a, false)
}

// UpdateAutomation implements storage.AutomationStore.
func (s *Store) UpdateAutomation(ctx context.Context, a storage.Automation) error {
	entity, _, _ := strings.Cut(a.ProjectID, "/")
	defer s.entityLock(entity)()
	old, err := s.GetAutomation(ctx, a.ProjectID, a.ID)
	if err != nil {
		return err
	}
	if err := s.checkAutomation(ctx, entity, a); err != nil {
		return err
	}
	a.CreatedBy, a.CreatedAt = old.CreatedBy, old.CreatedAt
	return s.insertAutomation(ctx, a, false)
}

func (s *Store) checkAutomation(ctx context.Context, entity string, a storage.Automation) error {
	taken, err := s.stringColumn(ctx, "automation names", "SELECT id FROM automations FINAL WHERE project_id = {project:String} "+
		"AND name = {name:String} AND id <> {id:String} AND NOT deleted",
		clickhouse.Named("project", a.ProjectID), clickhouse.Named("name", a.Name), clickhouse.Named("id", a.ID))
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return fmt.Errorf("automation name %q is taken in project %q (id %s); choose another name: %w",
			a.Name, a.ProjectID, taken[0], storage.ErrConflict)
	}
	if _, err := s.GetWebhook(ctx, entity, a.WebhookID); err != nil {
		return fmt.Errorf("webhook_id %q does not exist in entity %q; create it with /webhooks/create first: %w",
			a.WebhookID, entity, storage.ErrInvalidArgument)
	}
	return nil
}

func (s *Store) insertAutomation(ctx context.Context, a storage.Automation, deleted bool) error {
	return s.insertBatch(ctx, "automations", storekit.AutomationColumns+", version, deleted", 1, func(int) []any {
		return []any{a.ProjectID, a.ID, a.Name, a.Description, a.Scope, a.Collection, a.CollectionFilter, a.Event,
			a.AliasRegex, a.WebhookID, a.Payload, a.Enabled, a.CreatedBy, a.CreatedAt.UTC(), a.UpdatedAt.UTC(),
			a.Condition, s.versions.next(0), flag(deleted)}
	})
}

// GetAutomation implements storage.AutomationStore.
func (s *Store) GetAutomation(ctx context.Context, projectID, id string) (storage.Automation, error) {
	as, err := s.readAutomations(ctx, "project_id = {project:String} AND id = {id:String}",
		clickhouse.Named("project", projectID), clickhouse.Named("id", id))
	return storekit.First(as, err, fmt.Sprintf("automation %q does not exist in project %q", id, projectID))
}

// ListAutomations implements storage.AutomationStore.
func (s *Store) ListAutomations(ctx context.Context, projectID string) ([]storage.Automation, error) {
	return s.readAutomations(ctx, "project_id = {project:String}", clickhouse.Named("project", projectID))
}

func (s *Store) readAutomations(ctx context.Context, where string, args ...any) ([]storage.Automation, error) {
	return s.readAutomationsOrdered(ctx, where, "ORDER BY name", args...)
}

// readAutomationsOrdered reads the automations where holds, in order
// (an ORDER BY and maybe a LIMIT).
func (s *Store) readAutomationsOrdered(ctx context.Context, where, order string, args ...any) ([]storage.Automation, error) {
	out := []storage.Automation{}
	err := s.eachRow(ctx, "read automations", "SELECT "+storekit.AutomationColumns+" FROM automations FINAL WHERE "+where+
		" AND NOT deleted "+order, func(rows driver.Rows) error {
		var a storage.Automation
		if err := rows.Scan(&a.ProjectID, &a.ID, &a.Name, &a.Description, &a.Scope, &a.Collection, &a.CollectionFilter,
			&a.Event, &a.AliasRegex, &a.WebhookID, &a.Payload, &a.Enabled, &a.CreatedBy, &a.CreatedAt, &a.UpdatedAt, &a.Condition); err != nil {
			return err
		}
		a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
		out = append(out, a)
		return nil
	}, args...)
	return out, err
}

// DeleteAutomation implements storage.AutomationStore: the automation,
// then its deliveries (a crash between the two leaves them, and pending
// ones are still sent).
func (s *Store) DeleteAutomation(ctx context.Context, projectID, id string) error {
	entity, _, _ := strings.Cut(projectID, "/")
	defer s.entityLock(entity)()
	a, err := s.GetAutomation(ctx, projectID, id)
	if err != nil {
		return err
	}
	if err := s.insertAutomation(ctx, a, true); err != nil {
		return err
	}
	ds, err := s.readDeliveries(ctx, "project_id = {project:String} AND automation_id = {automation:String}", "",
		clickhouse.Named("project", projectID), clickhouse.Named("automation", id))
	if err != nil {
		return err
	}
	if err := s.insertDeliveries(ctx, ds, true); err != nil {
		return err
	}
	return s.deleteAlertState(ctx, projectID, id)
}
