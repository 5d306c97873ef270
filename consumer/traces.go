package consumer

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Traces consumes OTLP spans as they are, for a component that keeps them
// in OTLP form: the agent's buffer, which forwards them to a central
// Weft's OTLP endpoint, where they are mapped to calls.
type Traces interface {
	// ConsumeTraces takes td, whose spans go to project when it is not
	// empty (the request's project_id header) and to their resource's
	// project otherwise, and returns once td is durable. Errors are those
	// of Calls.ConsumeCalls.
	ConsumeTraces(ctx context.Context, project string, td ptrace.Traces) error
}
