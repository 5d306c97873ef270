package clickhouse

import (
	"testing"

	"github.com/weftdev/weft/storage/conformance"
)

func TestCallsConformance(t *testing.T) {
	conformance.RunCalls(t, func(t *testing.T) conformance.CallStore { return openTestStore(t, Options{}) })
}

func TestThreadsConformance(t *testing.T) {
	conformance.RunThreads(t, func(t *testing.T) conformance.ThreadStore { return openTestStore(t, Options{}) })
}
