package clickhouse

import (
	"context"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
)

// AggregateCalls implements storage.CallsAggregator.
func (s *Store) AggregateCalls(ctx context.Context, q storage.CallsAggregateQuery) (storage.CallsAggregate, error) {
	var out storage.CallsAggregate
	st, err := sqlgen.AggregateBuckets(s.dialect, q)
	if err != nil {
		return out, err
	}
	err = s.eachValueRow(ctx, st, func(col map[string]any) {
		b := storage.CallsBucket{
			Start: q.BucketStart(toInt64(col["bucket"])), CallCount: toInt64(col["call_count"]),
			ErrorCount: toInt64(col["error_count"]), LatencyP50: optFloat(col["latency_p50"]),
			LatencyP95: optFloat(col["latency_p95"]), LatencyP99: optFloat(col["latency_p99"]),
			LatencyCount: toInt64(col["latency_count"]), LatencyMin: optFloat(col["latency_min"]),
			LatencyMax: optFloat(col["latency_max"]),
		}
		if sum := optFloat(col["latency_sum"]); sum != nil {
			b.LatencySum = *sum
		}
		if b.LatencyCount == 0 { // aggregates of no values read as 0 or NaN
			b.LatencyMin, b.LatencyMax = nil, nil
		}
		for i := range q.Quantiles {
			q := optFloat(col[sqlgen.QuantileColumn(i)])
			if b.LatencyCount == 0 {
				q = nil
			}
			b.LatencyQuantiles = append(b.LatencyQuantiles, q)
		}
		out.Buckets = append(out.Buckets, b)
	})
	if err != nil {
		return out, wrapErr("aggregate calls", err)
	}
	if st, err = sqlgen.AggregateUsage(s.dialect, q); err != nil {
		return out, err
	}
	err = s.eachValueRow(ctx, st, func(col map[string]any) {
		model, _ := col["model"].(string)
		out.Usage = append(out.Usage, storage.ModelUsageBucket{
			Start: q.BucketStart(toInt64(col["bucket"])), Model: model, Requests: toInt64(col["requests"]),
			PromptTokens: toInt64(col["prompt_tokens"]), CompletionTokens: toInt64(col["completion_tokens"]),
			TotalTokens: toInt64(col["total_tokens"]), CacheReadInputTokens: toInt64(col["cache_read_tokens"]),
			CacheCreationInputTokens: toInt64(col["cache_creation_tokens"]), Entries: toInt64(col["entries"]),
		})
	})
	if err != nil {
		return out, wrapErr("aggregate usage", err)
	}
	return out, nil
}

// eachValueRow runs st and hands each row to use as values by column
// name; NULL columns are missing.
func (s *Store) eachValueRow(ctx context.Context, st sqlgen.Statement, use func(map[string]any)) error {
	rows, err := s.conn.Query(ctx, st.SQL, s.named(st.Args)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	sc := newValueScanner(rows)
	for rows.Next() {
		col := map[string]any{}
		if err := sc.scan(rows, func(i int, v any) {
			if v != nil {
				col[sc.names[i]] = v
			}
		}); err != nil {
			return err
		}
		use(col)
	}
	return rows.Err()
}

// optFloat is a nullable float column's value, nil for NULL (or NaN,
// which quantiles of no values give).
func optFloat(v any) *float64 {
	f, ok := v.(float64)
	if !ok || f != f {
		return nil
	}
	return &f
}
