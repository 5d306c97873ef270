package clickhouse

import (
	"testing"

	"github.com/weftdev/weft/storage/conformance"
)

func TestCallsConformance(t *testing.T) {
	conformance.RunCalls(t, func(t *testing.T) conformance.CallStore { return openTestStore(t, Options{}) })
}
