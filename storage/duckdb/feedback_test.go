package duckdb

import (
	"testing"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/conformance"
)

func TestFeedbackConformance(t *testing.T) {
	conformance.RunFeedback(t, func(t *testing.T) storage.FeedbackStore { return openTestStore(t) })
}
