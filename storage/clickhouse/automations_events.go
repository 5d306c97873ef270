package clickhouse

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// RecordEvents implements storage.EventOutbox.
func (s *Store) RecordEvents(ctx context.Context, events []storage.ArtifactEvent) error {
	now := s.opts.Now().UTC()
	return s.insertBatch(ctx, "automation_events", storekit.EventColumns+", recorded_at, version, deleted", len(events), func(i int) []any {
		e := events[i]
		return []any{e.ID, e.Type, e.ProjectID, e.Collection, e.VersionIndex, e.Digest, storekit.EncodeAliases(e.Aliases),
			e.Source, e.Author, string(storekit.EventMetadata(e.Metadata)), e.At.UTC(), now.Add(time.Duration(i)), s.versions.next(0), uint8(0)}
	})
}

// PendingEvents implements storage.EventOutbox.
func (s *Store) PendingEvents(ctx context.Context, limit int) ([]storage.ArtifactEvent, error) {
	var out []storage.ArtifactEvent
	err := s.eachRow(ctx, "read events", "SELECT "+storekit.EventColumns+" FROM automation_events FINAL WHERE NOT deleted "+
		"ORDER BY recorded_at, id LIMIT {limit:UInt32}", func(rows driver.Rows) error {
		var e storage.ArtifactEvent
		var aliases, metadata string
		if err := rows.Scan(&e.ID, &e.Type, &e.ProjectID, &e.Collection, &e.VersionIndex, &e.Digest, &aliases,
			&e.Source, &e.Author, &metadata, &e.At); err != nil {
			return err
		}
		var err error
		e.Aliases, err = storekit.DecodeAliases(aliases)
		e.Metadata, e.At = []byte(metadata), e.At.UTC()
		out = append(out, e)
		return err
	}, clickhouse.Named("limit", uint32(limit)))
	return out, err
}

// DispatchEvents implements storage.EventOutbox: deliveries first, then
// the events' removal. A crash between the two dispatches the events
// again, which adds nothing: delivery ids already stored are skipped.
func (s *Store) DispatchEvents(ctx context.Context, eventIDs []string, deliveries []storage.Delivery) error {
	if err := s.AddDeliveries(ctx, deliveries); err != nil {
		return err
	}
	return s.insertBatch(ctx, "automation_events", "id, version, deleted", len(eventIDs), func(i int) []any {
		return []any{eventIDs[i], s.versions.next(0), uint8(1)}
	})
}
