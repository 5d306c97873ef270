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
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
)

// Type is the component type, as it appears in metric labels.
var typeStr = "batch"

// Factory creates batch processors.
type Factory struct{}

// NewFactory returns the batch processor factory.
func NewFactory() Factory { return Factory{} }

// Type implements component.Factory.
func (Factory) Type() component.Type { return component.MustNewType(typeStr) }

// CreateDefaultConfig implements component.Factory.
func (Factory) CreateDefaultConfig() component.Config { return DefaultConfig() }

// Create builds a processor feeding next. It starts working on Start.
func (Factory) Create(_ context.Context, set telemetry.Settings, cfg Config, next consumer.Calls) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if next == nil {
		return nil, fmt.Errorf("batch processor %s: no next consumer", set.ID)
	}
	return newProcessor(set, cfg, next), nil
}
