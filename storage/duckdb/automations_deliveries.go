package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

const deliveryColumns = `id, project_id, automation_id, entity, webhook_id, event_id, event_type, body, preview,
	state, attempts, next_attempt_at, retry_from, lease_owner, lease_until, last_attempt_at, last_status,
	last_error, last_response, last_latency_ms, created_at, updated_at`

// AddDeliveries implements storage.DeliveryStore.
func (s *Store) AddDeliveries(ctx context.Context, ds []storage.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error { return insertDeliveries(ctx, tx, ds) })
}

// insertDeliveries adds deliveries, leaving ids already stored alone.
func insertDeliveries(ctx context.Context, tx *sql.Tx, ds []storage.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO automation_deliveries (`+deliveryColumns+`)
		VALUES (`+qmarks(22)+`) ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("prepare delivery insert: %w", err)
	}
	defer stmt.Close()
	for _, d := range ds {
		if _, err := stmt.ExecContext(ctx, d.ID, d.ProjectID, d.AutomationID, d.Entity, d.WebhookID, d.EventID,
			d.EventType, d.Body, d.Preview, d.State, d.Attempts, d.NextAttemptAt, d.RetryFrom, d.LeaseOwner,
			nullTimePtr(d.LeaseUntil), nullTimePtr(d.LastAttemptAt), d.LastStatus, d.LastError, d.LastResponse,
			d.LastLatencyMS, d.CreatedAt, d.UpdatedAt); err != nil {
			return fmt.Errorf("add delivery %s: %w", d.ID, err)
		}
	}
	return nil
}

// ClaimDeliveries implements storage.DeliveryStore: one UPDATE takes the
// due rows, so two workers never lease the same delivery at once.
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]storage.Delivery, error) {
	var out []storage.Delivery
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE automation_deliveries SET lease_owner = ?, lease_until = ?
			WHERE id IN (SELECT id FROM automation_deliveries WHERE state = ? AND next_attempt_at <= ?
				AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, id LIMIT ?)
			RETURNING `+deliveryColumns, owner, now.Add(lease), storage.DeliveryPending, now, now, limit)
		if err != nil {
			return fmt.Errorf("claim deliveries: %w", err)
		}
		out, err = scanDeliveries(rows)
		return err
	})
	storekit.SortDeliveriesDue(out)
	return out, err
}

// SaveDelivery implements storage.DeliveryStore.
func (s *Store) SaveDelivery(ctx context.Context, d storage.Delivery) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE automation_deliveries SET state = ?, attempts = ?, next_attempt_at = ?,
			retry_from = ?, lease_owner = ?, lease_until = ?, last_attempt_at = ?, last_status = ?, last_error = ?,
			last_response = ?, last_latency_ms = ?, updated_at = ? WHERE project_id = ? AND id = ?`,
			d.State, d.Attempts, d.NextAttemptAt, d.RetryFrom, d.LeaseOwner, nullTimePtr(d.LeaseUntil),
			nullTimePtr(d.LastAttemptAt), d.LastStatus, d.LastError, d.LastResponse, d.LastLatencyMS, d.UpdatedAt,
			d.ProjectID, d.ID)
		return expectOne(res, err, fmt.Sprintf("delivery %q does not exist in project %q", d.ID, d.ProjectID))
	})
}

// GetDelivery implements storage.DeliveryStore.
func (s *Store) GetDelivery(ctx context.Context, projectID, id string) (storage.Delivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM automation_deliveries
		WHERE project_id = ? AND id = ?`, projectID, id)
	if err != nil {
		return storage.Delivery{}, fmt.Errorf("read delivery: %w", err)
	}
	ds, err := scanDeliveries(rows)
	if err != nil {
		return storage.Delivery{}, err
	}
	if len(ds) == 0 {
		return storage.Delivery{}, fmt.Errorf("delivery %q does not exist in project %q: %w", id, projectID, storage.ErrNotFound)
	}
	return ds[0], nil
}

// ListDeliveries implements storage.DeliveryStore.
func (s *Store) ListDeliveries(ctx context.Context, projectID, automationID string, limit int) ([]storage.Delivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM automation_deliveries
		WHERE project_id = ? AND automation_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, projectID, automationID, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return scanDeliveries(rows)
}

// CountDeliveries implements storage.DeliveryStore.
func (s *Store) CountDeliveries(ctx context.Context, state string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM automation_deliveries WHERE state = ?`, state).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count deliveries: %w", err)
	}
	return n, nil
}

// scanDeliveries reads rows of deliveryColumns and closes them.
func scanDeliveries(rows *sql.Rows) ([]storage.Delivery, error) {
	defer rows.Close()
	out := []storage.Delivery{}
	for rows.Next() {
		var d storage.Delivery
		var leaseUntil, lastAttempt sql.NullTime
		if err := rows.Scan(&d.ID, &d.ProjectID, &d.AutomationID, &d.Entity, &d.WebhookID, &d.EventID, &d.EventType,
			&d.Body, &d.Preview, &d.State, &d.Attempts, &d.NextAttemptAt, &d.RetryFrom, &d.LeaseOwner, &leaseUntil,
			&lastAttempt, &d.LastStatus, &d.LastError, &d.LastResponse, &d.LastLatencyMS, &d.CreatedAt, &d.UpdatedAt); err != nil {
			return nil, fmt.Errorf("read deliveries: %w", err)
		}
		d.LeaseUntil, d.LastAttemptAt = timePtr(leaseUntil), timePtr(lastAttempt)
		d.NextAttemptAt, d.RetryFrom = d.NextAttemptAt.UTC(), d.RetryFrom.UTC()
		d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}
