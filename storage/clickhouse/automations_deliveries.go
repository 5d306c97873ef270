package clickhouse

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// AddDeliveries implements storage.DeliveryStore.
func (s *Store) AddDeliveries(ctx context.Context, ds []storage.Delivery) error {
	stored, err := s.storedDeliveries(ctx, ds)
	if err != nil {
		return err
	}
	var fresh []storage.Delivery
	for _, d := range ds {
		if !stored[d.ID] {
			fresh, stored[d.ID] = append(fresh, d), true
		}
	}
	return s.insertDeliveries(ctx, fresh, false)
}

func (s *Store) insertDeliveries(ctx context.Context, ds []storage.Delivery, deleted bool) error {
	return s.insertBatch(ctx, "automation_deliveries", storekit.DeliveryColumns+", version, deleted", len(ds), func(i int) []any {
		d := ds[i]
		return []any{d.ID, d.ProjectID, d.AutomationID, d.Entity, d.WebhookID, d.EventID, d.EventType,
			base64.StdEncoding.EncodeToString(d.Body), d.Preview, d.State, int32(d.Attempts), d.NextAttemptAt.UTC(),
			d.RetryFrom.UTC(), d.LeaseOwner, utcPtr(d.LeaseUntil), utcPtr(d.LastAttemptAt), int32(d.LastStatus),
			d.LastError, d.LastResponse, d.LastLatencyMS, d.CreatedAt.UTC(), d.UpdatedAt.UTC(), s.versions.next(0), flag(deleted)}
	})
}

// ClaimDeliveries implements storage.DeliveryStore. ClickHouse has no
// row locks, so a claim writes this owner's lease and reads the rows
// back: of two workers claiming at once, the later version wins and only
// its owner proceeds. Replicas that read before either wrote may both
// win; the delivery is then sent twice, which at-least-once allows.
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]storage.Delivery, error) {
	// Microseconds: the precision the table keeps, so the lease read back
	// compares equal to the one written.
	now = now.UTC().Truncate(time.Microsecond)
	due, err := s.readDeliveries(ctx, "state = {state:String} AND next_attempt_at <= {now:DateTime64(6, 'UTC')} "+
		"AND (lease_until IS NULL OR lease_until <= {now:DateTime64(6, 'UTC')})", "ORDER BY next_attempt_at, id LIMIT {limit:UInt32}",
		clickhouse.Named("state", storage.DeliveryPending), clickhouse.Named("now", now), clickhouse.Named("limit", uint32(limit)))
	if err != nil || len(due) == 0 {
		return nil, err
	}
	until := now.Add(lease)
	ids := make([]string, len(due))
	for i := range due {
		due[i].LeaseOwner, due[i].LeaseUntil, ids[i] = owner, &until, due[i].ID
	}
	if err := s.insertDeliveries(ctx, due, false); err != nil {
		return nil, err
	}
	back, err := s.readDeliveries(ctx, "id IN {ids:Array(String)}", "", clickhouse.Named("ids", ids))
	if err != nil {
		return nil, err
	}
	won := back[:0]
	for _, d := range back {
		if d.LeaseOwner == owner && d.LeaseUntil != nil && d.LeaseUntil.Equal(until) {
			won = append(won, d)
		}
	}
	storekit.SortDeliveriesDue(won)
	return won, nil
}

// SaveDeliveries implements storage.DeliveryStore in one INSERT.
func (s *Store) SaveDeliveries(ctx context.Context, ds []storage.Delivery) error {
	stored, err := s.storedDeliveries(ctx, ds)
	if err != nil {
		return err
	}
	kept := make([]storage.Delivery, 0, len(ds))
	for _, d := range ds {
		if stored[d.ID] {
			kept = append(kept, d)
		}
	}
	return s.insertDeliveries(ctx, kept, false)
}

// storedDeliveries reports which of ds's ids are stored.
func (s *Store) storedDeliveries(ctx context.Context, ds []storage.Delivery) (map[string]bool, error) {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	stored := map[string]bool{}
	for _, chunk := range chunks(ids) {
		found, err := s.stringColumn(ctx, "stored deliveries", "SELECT id FROM automation_deliveries FINAL "+
			"WHERE id IN {ids:Array(String)} AND NOT deleted", clickhouse.Named("ids", chunk))
		if err != nil {
			return nil, err
		}
		for _, id := range found {
			stored[id] = true
		}
	}
	return stored, nil
}

// GetDelivery implements storage.DeliveryStore.
func (s *Store) GetDelivery(ctx context.Context, projectID, id string) (storage.Delivery, error) {
	ds, err := s.readDeliveries(ctx, "project_id = {project:String} AND id = {id:String}", "",
		clickhouse.Named("project", projectID), clickhouse.Named("id", id))
	return storekit.First(ds, err, fmt.Sprintf("delivery %q does not exist in project %q", id, projectID))
}

// ListDeliveries implements storage.DeliveryStore.
func (s *Store) ListDeliveries(ctx context.Context, projectID, automationID string, limit int) ([]storage.Delivery, error) {
	return s.readDeliveries(ctx, "project_id = {project:String} AND automation_id = {automation:String}",
		"ORDER BY created_at DESC, id DESC LIMIT {limit:UInt32}", clickhouse.Named("project", projectID),
		clickhouse.Named("automation", automationID), clickhouse.Named("limit", uint32(limit)))
}

// CountDeliveries implements storage.DeliveryStore.
func (s *Store) CountDeliveries(ctx context.Context, state string) (int64, error) {
	var n uint64
	err := s.eachRow(ctx, "count deliveries", "SELECT count() FROM automation_deliveries FINAL WHERE NOT deleted AND state = {state:String}",
		func(rows driver.Rows) error { return rows.Scan(&n) }, clickhouse.Named("state", state))
	return int64(n), err
}

func (s *Store) readDeliveries(ctx context.Context, where, tail string, args ...any) ([]storage.Delivery, error) {
	out := []storage.Delivery{}
	err := s.eachRow(ctx, "read deliveries", "SELECT "+storekit.DeliveryColumns+" FROM automation_deliveries FINAL WHERE "+where+
		" AND NOT deleted "+tail, func(rows driver.Rows) error {
		var d storage.Delivery
		var body string
		var attempts, status int32
		if err := rows.Scan(&d.ID, &d.ProjectID, &d.AutomationID, &d.Entity, &d.WebhookID, &d.EventID, &d.EventType, &body,
			&d.Preview, &d.State, &attempts, &d.NextAttemptAt, &d.RetryFrom, &d.LeaseOwner, &d.LeaseUntil, &d.LastAttemptAt,
			&status, &d.LastError, &d.LastResponse, &d.LastLatencyMS, &d.CreatedAt, &d.UpdatedAt); err != nil {
			return err
		}
		var err error
		d.Body, err = base64.StdEncoding.DecodeString(body)
		d.Attempts, d.LastStatus = int(attempts), int(status)
		d.NextAttemptAt, d.RetryFrom, d.CreatedAt, d.UpdatedAt = d.NextAttemptAt.UTC(), d.RetryFrom.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
		d.LeaseUntil, d.LastAttemptAt = utcPtr(d.LeaseUntil), utcPtr(d.LastAttemptAt)
		out = append(out, d)
		return err
	}, args...)
	return out, err
}
