package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// AddDeliveries implements storage.DeliveryStore.
func (s *Store) AddDeliveries(ctx context.Context, ds []storage.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error { return insertDeliveries(ctx, tx, ds) })
}

// insertDeliveries adds deliveries, leaving ids already stored alone,
// with one multi-row INSERT per chunk.
func insertDeliveries(ctx context.Context, tx *sql.Tx, ds []storage.Delivery) error {
	row := "(" + qmarks(22) + ")"
	for chunk := range slices.Chunk(ds, deliveryChunk) {
		args := make([]any, 0, len(chunk)*22)
		for _, d := range chunk {
			args = append(args, d.ID, d.ProjectID, d.AutomationID, d.Entity, d.WebhookID, d.EventID, d.EventType, d.Body,
				d.Preview, d.State, d.Attempts, d.NextAttemptAt, d.RetryFrom, d.LeaseOwner, nullTimePtr(d.LeaseUntil),
				nullTimePtr(d.LastAttemptAt), d.LastStatus, d.LastError, d.LastResponse, d.LastLatencyMS, d.CreatedAt, d.UpdatedAt)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO automation_deliveries (`+storekit.DeliveryColumns+`) VALUES `+
			rowsOf(row, len(chunk))+` ON CONFLICT (id) DO NOTHING`, args...); err != nil {
			return fmt.Errorf("add deliveries: %w", err)
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
			RETURNING `+storekit.DeliveryColumns, owner, now.Add(lease), storage.DeliveryPending, now, now, limit)
		if err != nil {
			return fmt.Errorf("claim deliveries: %w", err)
		}
		out, err = scanDeliveries(rows)
		return err
	})
	storekit.SortDeliveriesDue(out)
	return out, err
}

// SaveDeliveries implements storage.DeliveryStore with one UPDATE per
// chunk: statements, not rows, are what DuckDB's writes pay for.
func (s *Store) SaveDeliveries(ctx context.Context, ds []storage.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(ds, deliveryChunk) {
			args := make([]any, 0, len(chunk)*14)
			for _, d := range chunk {
				args = append(args, d.ProjectID, d.ID, d.State, d.Attempts, d.NextAttemptAt, d.RetryFrom, d.LeaseOwner,
					nullTimePtr(d.LeaseUntil), nullTimePtr(d.LastAttemptAt), d.LastStatus, d.LastError, d.LastResponse,
					d.LastLatencyMS, d.UpdatedAt)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE automation_deliveries AS d SET state = v.state, attempts = v.attempts,
				next_attempt_at = v.next_attempt_at, retry_from = v.retry_from, lease_owner = v.lease_owner,
				lease_until = v.lease_until, last_attempt_at = v.last_attempt_at, last_status = v.last_status,
				last_error = v.last_error, last_response = v.last_response, last_latency_ms = v.last_latency_ms,
				updated_at = v.updated_at
				FROM (VALUES `+rowsOf(saveRow, len(chunk))+`) AS v(project_id, id, state, attempts, next_attempt_at,
					retry_from, lease_owner, lease_until, last_attempt_at, last_status, last_error, last_response,
					last_latency_ms, updated_at)
				WHERE d.project_id = v.project_id AND d.id = v.id`, args...); err != nil {
				return fmt.Errorf("save deliveries: %w", err)
			}
		}
		return nil
	})
}

// deliveryChunk bounds the rows of one multi-row statement.
const deliveryChunk = 200

// saveRow is one row of SaveDeliveries' VALUES, typed so NULLs bind.
const saveRow = "(?, ?, ?, ?::INTEGER, ?::TIMESTAMP, ?::TIMESTAMP, ?, ?::TIMESTAMP, ?::TIMESTAMP, ?::INTEGER, ?, ?, ?::BIGINT, ?::TIMESTAMP)"

// rowsOf repeats a VALUES row n times.
func rowsOf(row string, n int) string {
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// GetDelivery implements storage.DeliveryStore.
func (s *Store) GetDelivery(ctx context.Context, projectID, id string) (storage.Delivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.DeliveryColumns+` FROM automation_deliveries
		WHERE project_id = ? AND id = ?`, projectID, id)
	if err != nil {
		return storage.Delivery{}, fmt.Errorf("read delivery: %w", err)
	}
	ds, err := scanDeliveries(rows)
	return storekit.First(ds, err, fmt.Sprintf("delivery %q does not exist in project %q", id, projectID))
}

// ListDeliveries implements storage.DeliveryStore.
func (s *Store) ListDeliveries(ctx context.Context, projectID, automationID string, limit int) ([]storage.Delivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.DeliveryColumns+` FROM automation_deliveries
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

// scanDeliveries reads rows of storekit.DeliveryColumns and closes them.
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
