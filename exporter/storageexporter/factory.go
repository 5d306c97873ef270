// Package storageexporter is the pipeline's storage exporter: it makes
// call batches durable and writes them to a storage backend. With its
// write-ahead log enabled (the embedded default) a batch is acknowledged
// as soon as it is fsynced to the log; an applier writes what the log holds
// to the store in large transactions behind it, so the acknowledgement
// never waits for the store's commits and checkpoints. Reads call Barrier
// first to see every acknowledged write. After a crash the log is replayed
// into the store behind Start, before any new batch (see replay.go);
// writing a record twice is harmless because a call part merges
// idempotently. A record the store refuses even alone, while it takes
// other writes, is set aside in a rejected file after a few attempts; a
// store that takes no writes at all is waited for (see storeRun). Without
// the log (ClickHouse) each batch is written straight to the store.
//
// It must never import receivers or processors.
package storageexporter

import (
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
)

const typeStr = "storage"

// Type is the exporter's component type, as metric labels show it.
func Type() component.Type { return component.MustNewType(typeStr) }

// New builds an exporter writing to store, labelled backend in metrics.
// It opens the log (if enabled) on Start.
func New(set telemetry.Settings, cfg Config, store storage.CallWriter, backend string) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil {
		return nil, fmt.Errorf("storage exporter %s: no store", set.ID)
	}
	return newExporter(set, cfg, store, backend), nil
}
