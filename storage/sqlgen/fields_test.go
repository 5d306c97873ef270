package sqlgen

import "testing"

func TestDynamicFields(t *testing.T) {
	runIDCases(t, dynamicFieldsCases())
}

func TestSpecialFields(t *testing.T) {
	runIDCases(t, specialFieldsCases())
}

func TestDatetimeAndNulls(t *testing.T) {
	runIDCases(t, datetimeAndNullsCases())
}

func TestFeedbackFields(t *testing.T) {
	runIDCases(t, feedbackFieldsCases())
}
