package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weftdev/weft/storage"
)

// rateCountsKept is how long published rate counts are kept: windows
// are a minute, so an hour is ample for any replica that lags.
const rateCountsKept = time.Hour

// inferenceLimitsName names the admin API's limits row.
const inferenceLimitsName = "limits"

// PublishRateCounts implements storage.InferenceLimitsStore in one
// transaction, which also drops the counts of expired windows.
func (s *Store) PublishRateCounts(ctx context.Context, counts []storage.RateCount) error {
	if len(counts) == 0 {
		return nil
	}
	oldest := counts[0].Window
	for _, c := range counts {
		oldest = minTime(oldest, c.Window)
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(counts, deliveryChunk) {
			args := make([]any, 0, len(chunk)*5)
			for _, c := range chunk {
				args = append(args, c.Scope, c.Window.UTC(), c.Replica, c.Requests, c.Tokens)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO inference_rate_counts (scope, window_start, replica, requests, tokens) VALUES `+
				rowsOf("("+qmarks(5)+")", len(chunk))+
				` ON CONFLICT (scope, window_start, replica) DO UPDATE SET requests = excluded.requests, tokens = excluded.tokens`, args...); err != nil {
				return fmt.Errorf("publish rate counts: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM inference_rate_counts WHERE window_start < ?`, oldest.UTC().Add(-rateCountsKept)); err != nil {
			return fmt.Errorf("drop expired rate counts: %w", err)
		}
		return nil
	})
}

// RateCounts implements storage.InferenceLimitsStore.
func (s *Store) RateCounts(ctx context.Context, since time.Time, exceptReplica string, limit int) ([]storage.RateCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT scope, window_start, sum(requests)::BIGINT, sum(tokens)::BIGINT
		FROM inference_rate_counts WHERE window_start >= ? AND replica <> ?
		GROUP BY scope, window_start ORDER BY scope, window_start LIMIT ?`, since.UTC(), exceptReplica, limit)
	if err != nil {
		return nil, fmt.Errorf("read rate counts: %w", err)
	}
	defer rows.Close()
	var out []storage.RateCount
	for rows.Next() {
		var c storage.RateCount
		if err := rows.Scan(&c.Scope, &c.Window, &c.Requests, &c.Tokens); err != nil {
			return nil, fmt.Errorf("read rate counts: %w", err)
		}
		c.Window = c.Window.UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// InferenceLimits implements storage.InferenceLimitsStore.
func (s *Store) InferenceLimits(ctx context.Context) (storage.InferenceLimits, error) {
	var l storage.InferenceLimits
	var doc string
	err := s.db.QueryRowContext(ctx, `SELECT doc, updated_at, updated_by FROM inference_settings WHERE name = ?`,
		inferenceLimitsName).Scan(&doc, &l.UpdatedAt, &l.UpdatedBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return l, fmt.Errorf("%w: no inference limits were set through the admin API", storage.ErrNotFound)
	case err != nil:
		return l, fmt.Errorf("read inference limits: %w", err)
	}
	l.Doc, l.UpdatedAt = []byte(doc), l.UpdatedAt.UTC()
	return l, nil
}

// PutInferenceLimits implements storage.InferenceLimitsStore.
func (s *Store) PutInferenceLimits(ctx context.Context, l storage.InferenceLimits) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO inference_settings (name, doc, updated_at, updated_by) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
			inferenceLimitsName, string(l.Doc), l.UpdatedAt.UTC(), l.UpdatedBy); err != nil {
			return fmt.Errorf("store inference limits: %w", err)
		}
		return nil
	})
}

// DeleteInferenceLimits implements storage.InferenceLimitsStore.
func (s *Store) DeleteInferenceLimits(ctx context.Context) error {
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM inference_settings WHERE name = ?`, inferenceLimitsName); err != nil {
			return fmt.Errorf("reset inference limits: %w", err)
		}
		return nil
	})
}
