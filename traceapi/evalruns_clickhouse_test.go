package traceapi_test

import "testing"

// TestEvaluationRunsClickHouse runs the evaluation-run cases over the
// ClickHouse store, on a database of their own in the embedded engine.
func TestEvaluationRunsClickHouse(t *testing.T) {
	runEvalSuite(t, func(t *testing.T) evalStore { return openClickHouse(t) })
}
