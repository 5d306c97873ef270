package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
)

// inferenceLimitsName names the admin API's limits row.
const inferenceLimitsName = "limits"

// PublishRateCounts implements storage.InferenceLimitsStore in one
// INSERT: each replica writes only its own rows, and the latest version
// of a row wins; the table's TTL drops windows an hour old.
func (s *Store) PublishRateCounts(ctx context.Context, counts []storage.RateCount) error {
	return s.insertBatch(ctx, "inference_rate_counts", "scope, window_start, replica, requests, tokens, version", len(counts), func(i int) []any {
		c := counts[i]
		return []any{c.Scope, c.Window.UTC(), c.Replica, c.Requests, c.Tokens, s.versions.next(0)}
	})
}

// RateCounts implements storage.InferenceLimitsStore.
func (s *Store) RateCounts(ctx context.Context, since time.Time, exceptReplica string, limit int) ([]storage.RateCount, error) {
	var out []storage.RateCount
	err := s.eachRow(ctx, "read rate counts", "SELECT scope, window_start, toInt64(sum(requests)), toInt64(sum(tokens)) "+
		"FROM inference_rate_counts FINAL WHERE window_start >= {since:DateTime64(6, 'UTC')} AND replica != {replica:String} "+
		"GROUP BY scope, window_start ORDER BY scope, window_start LIMIT {limit:UInt32}", func(rows driver.Rows) error {
		var c storage.RateCount
		if err := rows.Scan(&c.Scope, &c.Window, &c.Requests, &c.Tokens); err != nil {
			return err
		}
		c.Window = c.Window.UTC()
		out = append(out, c)
		return nil
	}, clickhouse.Named("since", since.UTC()), clickhouse.Named("replica", exceptReplica), clickhouse.Named("limit", uint32(limit)))
	return out, err
}

// InferenceLimits implements storage.InferenceLimitsStore.
func (s *Store) InferenceLimits(ctx context.Context) (storage.InferenceLimits, error) {
	var l storage.InferenceLimits
	found := false
	err := s.eachRow(ctx, "read inference limits", "SELECT doc, updated_at, updated_by FROM inference_settings FINAL "+
		"WHERE name = {name:String} AND NOT deleted", func(rows driver.Rows) error {
		var doc string
		if err := rows.Scan(&doc, &l.UpdatedAt, &l.UpdatedBy); err != nil {
			return err
		}
		l.Doc, l.UpdatedAt, found = []byte(doc), l.UpdatedAt.UTC(), true
		return nil
	}, clickhouse.Named("name", inferenceLimitsName))
	switch {
	case err != nil:
		return l, err
	case !found:
		return l, fmt.Errorf("%w: no inference limits were set through the admin API", storage.ErrNotFound)
	}
	return l, nil
}

// PutInferenceLimits implements storage.InferenceLimitsStore.
func (s *Store) PutInferenceLimits(ctx context.Context, l storage.InferenceLimits) error {
	return s.writeInferenceLimits(ctx, l, false)
}

// DeleteInferenceLimits implements storage.InferenceLimitsStore with a
// row that marks the setting deleted.
func (s *Store) DeleteInferenceLimits(ctx context.Context) error {
	return s.writeInferenceLimits(ctx, storage.InferenceLimits{Doc: []byte("{}"), UpdatedAt: time.Now()}, true)
}

func (s *Store) writeInferenceLimits(ctx context.Context, l storage.InferenceLimits, deleted bool) error {
	return s.insertBatch(ctx, "inference_settings", "name, doc, updated_at, updated_by, version, deleted", 1, func(int) []any {
		return []any{inferenceLimitsName, string(l.Doc), l.UpdatedAt.UTC(), l.UpdatedBy, s.versions.next(0), flag(deleted)}
	})
}
