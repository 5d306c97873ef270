package queryapi_test

import (
	"context"
	"testing"

	"github.com/weftdev/weft/internal/chfront"
	"github.com/weftdev/weft/storage/clickhouse"
)

// TestEvaluationRunsClickHouse runs the evaluation-run cases over the
// ClickHouse store, on a database of their own in the embedded engine.
func TestEvaluationRunsClickHouse(t *testing.T) {
	runEvalSuite(t, func(t *testing.T) evalStore {
		srv := chfront.StartForTest(t)
		s, err := clickhouse.Open(context.Background(), srv.URL()+"/"+chfront.NewTestDatabase(t, srv), clickhouse.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	})
}
