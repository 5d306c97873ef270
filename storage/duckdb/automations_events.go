package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/storekit"
)

// RecordEvents implements storage.EventOutbox, one INSERT per chunk.
func (s *Store) RecordEvents(ctx context.Context, events []storage.ArtifactEvent) error {
	if len(events) == 0 {
		return nil
	}
	row := "(nextval('automation_event_seq'), " + qmarks(11) + ")"
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(events, deliveryChunk) {
			args := make([]any, 0, len(chunk)*11)
			for _, e := range chunk {
				args = append(args, e.ID, e.Type, e.ProjectID, e.Collection, e.VersionIndex, e.Digest,
					storekit.EncodeAliases(e.Aliases), e.Source, e.Author, string(storekit.EventMetadata(e.Metadata)), e.At)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO automation_events (seq, `+storekit.EventColumns+`) VALUES `+
				rowsOf(row, len(chunk)), args...); err != nil {
				return fmt.Errorf("record events: %w", err)
			}
		}
		return nil
	})
}

// PendingEvents implements storage.EventOutbox.
func (s *Store) PendingEvents(ctx context.Context, limit int) ([]storage.ArtifactEvent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+storekit.EventColumns+` FROM automation_events ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []storage.ArtifactEvent
	for rows.Next() {
		var e storage.ArtifactEvent
		var aliases, metadata string
		if err := rows.Scan(&e.ID, &e.Type, &e.ProjectID, &e.Collection, &e.VersionIndex, &e.Digest, &aliases,
			&e.Source, &e.Author, &metadata, &e.At); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		if e.Aliases, err = storekit.DecodeAliases(aliases); err != nil {
			return nil, fmt.Errorf("event %s: %w", e.ID, err)
		}
		e.Metadata, e.At = []byte(metadata), e.At.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

// DispatchEvents implements storage.EventOutbox in one transaction.
func (s *Store) DispatchEvents(ctx context.Context, eventIDs []string, deliveries []storage.Delivery) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := insertDeliveries(ctx, tx, deliveries); err != nil {
			return err
		}
		if len(eventIDs) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM automation_events WHERE id IN (SELECT unnest(?::VARCHAR[]))`, eventIDs)
		if err != nil {
			return fmt.Errorf("remove dispatched events: %w", err)
		}
		return nil
	})
}
