// Package batchprocessor is the pipeline's processor: it admits call
// records from every receiver within bounds (ops and bytes; beyond them
// consumer.ErrOverloaded), groups the requests that arrive together into
// one batch, merges the parts of each call in the batch (the pipeline's
// one merge, storage.MergeOps), and hands the batch to the exporter. Each
// request is answered when its batch is durable; a batch that fails is
// retried request by request, so one bad request fails alone.
//
// It must never import receivers, exporters or storage backends.
package batchprocessor

import (
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
)

const typeStr = "batch"

// Type is the processor's component type, as metric labels show it.
func Type() component.Type { return component.MustNewType(typeStr) }

// New builds a processor feeding next. It starts working on Start.
func New(set telemetry.Settings, cfg Config, next consumer.Calls) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if next == nil {
		return nil, fmt.Errorf("batch processor %s: no next consumer", set.ID)
	}
	return newProcessor(set, cfg, next), nil
}
