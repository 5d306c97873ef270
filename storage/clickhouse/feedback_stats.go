package clickhouse

import (
	"context"
	"encoding/json"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.FeedbackAnalyzer = (*Store)(nil)

// FeedbackStats implements storage.FeedbackAnalyzer.
func (s *Store) FeedbackStats(ctx context.Context, q storage.FeedbackStatsQuery) (storage.FeedbackStatsResult, error) {
	return storekit.FeedbackStats(ctx, s.dialect, s.valueRows, q)
}

// AggregateFeedback implements storage.FeedbackAnalyzer.
func (s *Store) AggregateFeedback(ctx context.Context, q storage.FeedbackAggregateQuery) ([]storage.FeedbackAggregateGroup, error) {
	return storekit.AggregateFeedback(ctx, s.dialect, s.valueRows, q)
}

// SampleFeedbackPayloads implements storage.FeedbackAnalyzer.
func (s *Store) SampleFeedbackPayloads(ctx context.Context, f storage.FeedbackFilter, limit int) ([]json.RawMessage, error) {
	return storekit.SampleFeedbackPayloads(ctx, s.dialect, s.valueRows, f, limit)
}

// valueRows is a storekit.RowRunner: it runs st and hands use each row's
// plain values.
func (s *Store) valueRows(ctx context.Context, st sqlgen.Statement, use func([]any) error) error {
	rows, err := s.conn.Query(ctx, st.SQL, s.named(st.Args)...)
	if err != nil {
		return wrapErr("query", err)
	}
	defer rows.Close()
	sc := newValueScanner(rows)
	vals := make([]any, len(sc.names))
	for rows.Next() {
		if err := sc.scan(rows, func(i int, v any) { vals[i] = v }); err != nil {
			return err
		}
		if err := use(vals); err != nil {
			return err
		}
	}
	return wrapErr("read rows", rows.Err())
}
