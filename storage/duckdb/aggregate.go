package duckdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// AggregateCalls implements storage.CallsAggregator.
func (s *Store) AggregateCalls(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	var out storage.CallsAggregate
	if f, ok := minutesServe(q); ok {
		if err := q.Validate(); err != nil {
			return out, err
		}
		return s.aggregateFromMinutes(ctx, q, f)
	}
	return s.aggregateByScan(ctx, q)
}

// aggregateByScan answers q from the calls alone, for the filters and
// ranges the rollups do not keep.
func (s *Store) aggregateByScan(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	var out storage.CallsAggregate
	d := sqlgen.NewDuckDB()
	st, err := sqlgen.AggregateBuckets(d, q)
	if err != nil {
		return out, err
	}
	if err := s.eachRow(ctx, st, func(rows *sql.Rows) error {
		b, err := scanBucket(rows, q)
		out.Buckets = append(out.Buckets, b)
		return err
	}); err != nil {
		return out, fmt.Errorf("aggregate calls: %w", err)
	}
	if st, err = sqlgen.AggregateUsage(d, q); err != nil {
		return out, err
	}
	if err := s.eachRow(ctx, st, func(rows *sql.Rows) error {
		u, err := scanUsage(rows, q)
		out.Usage = append(out.Usage, u)
		return err
	}); err != nil {
		return out, fmt.Errorf("aggregate usage: %w", err)
	}
	return out, nil
}

// scanBucket reads one row of sqlgen.AggregateColumns and q's extra
// quantiles.
func scanBucket(rows *sql.Rows, q storage.CallsAggregateQuery) (storage.CallsBucket, error) {
	var (
		b                     storage.CallsBucket
		i                     int64
		p50, p95, p99, lo, hi sql.NullFloat64
	)
	extra := make([]sql.NullFloat64, len(q.Quantiles))
	dest := []any{&i, &b.CallCount, &b.ErrorCount, &p50, &p95, &p99, &b.LatencyCount, &b.LatencySum, &lo, &hi}
	for j := range extra {
		dest = append(dest, &extra[j])
	}
	err := rows.Scan(dest...)
	b.Start, b.LatencyP50, b.LatencyP95, b.LatencyP99 = q.BucketStart(i), floatPtr(p50), floatPtr(p95), floatPtr(p99)
	b.LatencyMin, b.LatencyMax = floatPtr(lo), floatPtr(hi)
	for _, e := range extra {
		b.LatencyQuantiles = append(b.LatencyQuantiles, floatPtr(e))
	}
	return b, err
}

// scanUsage reads one row of sqlgen.UsageColumns.
func scanUsage(rows *sql.Rows, q storage.CallsAggregateQuery) (storage.ModelUsageBucket, error) {
	var (
		u storage.ModelUsageBucket
		i int64
	)
	err := rows.Scan(&i, &u.Model, &u.Requests, &u.PromptTokens, &u.CompletionTokens, &u.TotalTokens,
		&u.CacheReadInputTokens, &u.CacheCreationInputTokens, &u.Entries)
	u.Start = q.BucketStart(i)
	return u, err
}

// eachRow runs st and calls scan for each row.
func (s *Store) eachRow(ctx context.Context, st sqlgen.Statement, scan func(*sql.Rows) error) error {
	return eachRowOn(ctx, s.calls.guarded(s.stmts), st, scan)
}

// eachRowOn runs st on qr and calls scan for each row.
func eachRowOn(ctx context.Context, qr queryer, st sqlgen.Statement, scan func(*sql.Rows) error) error {
	rows, err := qr.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
