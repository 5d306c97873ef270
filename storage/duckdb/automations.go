package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// CreateAutomation implements storage.AutomationStore.
func (s *Store) CreateAutomation(ctx context.Context, a storage.Automation) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkAutomation(ctx, tx, a); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO automations (`+storekit.AutomationColumns+`) VALUES (`+qmarks(16)+`)`,
			a.ProjectID, a.ID, a.Name, a.Description, a.Scope, a.Collection, a.CollectionFilter, a.Event,
			a.AliasRegex, a.WebhookID, a.Payload, a.Enabled, a.CreatedBy, a.CreatedAt, a.UpdatedAt, a.Condition)
		if err != nil {
			return fmt.Errorf("create automation %s: %w", a.Name, err)
		}
		return nil
	})
}

// UpdateAutomation implements storage.AutomationStore.
func (s *Store) UpdateAutomation(ctx context.Context, a storage.Automation) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkAutomation(ctx, tx, a); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE automations SET name = ?, description = ?, scope = ?, collection = ?,
			collection_filter = ?, event = ?, alias_regex = ?, webhook_id = ?, payload = ?, enabled = ?, updated_at = ?,
			condition = ? WHERE project_id = ? AND id = ?`, a.Name, a.Description, a.Scope, a.Collection, a.CollectionFilter,
			a.Event, a.AliasRegex, a.WebhookID, a.Payload, a.Enabled, a.UpdatedAt, a.Condition, a.ProjectID, a.ID)
		return expectOne(res, err, fmt.Sprintf("automation %q does not exist in project %q", a.ID, a.ProjectID))
	})
}

// checkAutomation refuses a name another automation of the project has
// and a webhook the project's entity does not have.
func checkAutomation(ctx context.Context, tx *sql.Tx, a storage.Automation) error {
	taken, err := queryNames(ctx, tx, `SELECT id FROM automations WHERE project_id = ? AND name = ? AND id <> ?`,
		a.ProjectID, a.Name, a.ID)
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return fmt.Errorf("automation name %q is taken in project %q (id %s); choose another name: %w",
			a.Name, a.ProjectID, taken[0], storage.ErrConflict)
	}
	entity, _, _ := strings.Cut(a.ProjectID, "/")
	hooks, err := queryNames(ctx, tx, `SELECT id FROM automation_webhooks WHERE entity = ? AND id = ?`, entity, a.WebhookID)
	if err != nil {
		return err
	}
	if len(hooks) == 0 {
		return fmt.Errorf("webhook_id %q does not exist in entity %q; create it with /webhooks/create first: %w",
			a.WebhookID, entity, storage.ErrInvalidArgument)
	}
	return nil
}

// GetAutomation implements storage.AutomationStore.
func (s *Store) GetAutomation(ctx context.Context, projectID, id string) (storage.Automation, error) {
	as, err := s.automations(ctx, "project_id = ? AND id = ?", projectID, id)
	return storekit.First(as, err, fmt.Sprintf("automation %q does not exist in project %q", id, projectID))
}

// ListAutomations implements storage.AutomationStore.
func (s *Store) ListAutomations(ctx context.Context, projectID string) ([]storage.Automation, error) {
	return s.automations(ctx, "project_id = ?", projectID)
}

func (s *Store) automations(ctx context.Context, where string, args ...any) ([]storage.Automation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.AutomationColumns+` FROM automations WHERE `+where+` ORDER BY name`, args...)
	if err != nil {
		return nil, fmt.Errorf("read automations: %w", err)
	}
	return scanAutomations(rows)
}

// scanAutomations reads and closes rows of AutomationColumns.
func scanAutomations(rows *sql.Rows) ([]storage.Automation, error) {
	defer rows.Close()
	out := []storage.Automation{}
	for rows.Next() {
		var a storage.Automation
		if err := rows.Scan(&a.ProjectID, &a.ID, &a.Name, &a.Description, &a.Scope, &a.Collection, &a.CollectionFilter,
			&a.Event, &a.AliasRegex, &a.WebhookID, &a.Payload, &a.Enabled, &a.CreatedBy, &a.CreatedAt, &a.UpdatedAt, &a.Condition); err != nil {
			return nil, fmt.Errorf("read automations: %w", err)
		}
		a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// DeleteAutomation implements storage.AutomationStore.
func (s *Store) DeleteAutomation(ctx context.Context, projectID, id string) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM automations WHERE project_id = ? AND id = ?`, projectID, id)
		if err := expectOne(res, err, fmt.Sprintf("automation %q does not exist in project %q", id, projectID)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM automation_deliveries WHERE project_id = ? AND automation_id = ?`,
			projectID, id); err != nil {
			return fmt.Errorf("delete deliveries of automation %s: %w", id, err)
		}
		for _, table := range []string{"automation_alert_states", "automation_alert_transitions"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE project_id = ? AND automation_id = ?`,
				projectID, id); err != nil {
				return fmt.Errorf("delete alert state of automation %s: %w", id, err)
			}
		}
		return nil
	})
}
