package duckdb

import (
	"testing"

	"github.com/weftdev/weft/storage/conformance"
)

func TestTraceDataConformance(t *testing.T) {
	conformance.RunTraceData(t, func(t *testing.T) conformance.TraceStore { return openTestStore(t) })
}

func TestControlPlaneConformance(t *testing.T) {
	conformance.RunControlPlane(t, func(t *testing.T) conformance.ControlStore { return openTestStore(t) })
}
