package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/sqlgen"
	"github.com/weftdev/weft/storage/storekit"
)

var _ storage.FeedbackAnalyzer = (*Store)(nil)

// FeedbackStats implements storage.FeedbackAnalyzer.
func (s *Store) FeedbackStats(ctx context.Context, q storage.FeedbackStatsQuery) (storage.FeedbackStatsResult, error) {
	return storekit.FeedbackStats(ctx, sqlgen.NewDuckDB(), s.feedbackRows, q)
}

// AggregateFeedback implements storage.FeedbackAnalyzer.
func (s *Store) AggregateFeedback(ctx context.Context, q storage.FeedbackAggregateQuery) ([]storage.FeedbackAggregateGroup, error) {
	return storekit.AggregateFeedback(ctx, sqlgen.NewDuckDB(), s.feedbackRows, q)
}

// SampleFeedbackPayloads implements storage.FeedbackAnalyzer.
func (s *Store) SampleFeedbackPayloads(ctx context.Context, f storage.FeedbackFilter, limit int) ([]json.RawMessage, error) {
	return storekit.SampleFeedbackPayloads(ctx, sqlgen.NewDuckDB(), s.feedbackRows, f, limit)
}

// feedbackRows is a storekit.RowRunner over the feedback tables.
func (s *Store) feedbackRows(ctx context.Context, st sqlgen.Statement, use func([]any) error) error {
	var vals, ptrs []any
	return eachRowOn(ctx, s.db, st, func(rows *sql.Rows) error {
		if vals == nil {
			cols, err := rows.Columns()
			if err != nil {
				return err
			}
			vals, ptrs = make([]any, len(cols)), make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		return use(vals)
	})
}
