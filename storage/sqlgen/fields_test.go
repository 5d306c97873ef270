package sqlgen

import "testing"

func TestDynamicFields(t *testing.T) {
	runIDCases(t, duckDBFixture(t), dynamicFieldsCases())
}

func TestSpecialFields(t *testing.T) {
	runIDCases(t, duckDBFixture(t), specialFieldsCases())
}

func TestDatetimeAndNulls(t *testing.T) {
	runIDCases(t, duckDBFixture(t), datetimeAndNullsCases())
}

func TestFeedbackFields(t *testing.T) {
	runIDCases(t, duckDBFixture(t), feedbackFieldsCases())
}
