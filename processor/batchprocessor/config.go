package batchprocessor

import (
	"errors"
	"time"
)

// Config bounds what the processor admits and shapes its batches. Its YAML
// keys live under `pipeline:` in weft.yaml.
type Config struct {
	// MaxQueuedOps is the most call records admitted and not yet exported;
	// beyond it ConsumeCalls answers consumer.ErrOverloaded. Default 100000.
	MaxQueuedOps int `yaml:"max_queued_ops"`
	// MaxQueuedBytes bounds the approximate payload bytes admitted and not
	// yet exported. Default 64 MiB.
	MaxQueuedBytes int64 `yaml:"max_queued_bytes"`
	// MaxBatchOps is the most call records sent to the exporter at once.
	// Default 5000.
	MaxBatchOps int `yaml:"max_batch_ops"`
	// BatchLinger is how long a batch that is not full waits for more
	// requests. Zero (the default) sends at once: requests that arrive
	// while a batch is being exported share the next one.
	BatchLinger time.Duration `yaml:"batch_linger"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{MaxQueuedOps: 100_000, MaxQueuedBytes: 64 << 20, MaxBatchOps: 5000}
}

// Validate reports settings that cannot work, naming the key.
func (c Config) Validate() error {
	var errs []error
	check := func(bad bool, msg string) {
		if bad {
			errs = append(errs, errors.New(msg))
		}
	}
	check(c.MaxQueuedOps < 1, "pipeline.max_queued_ops: must be at least 1")
	check(c.MaxQueuedBytes < 1, "pipeline.max_queued_bytes: must be at least 1")
	check(c.MaxBatchOps < 1, "pipeline.max_batch_ops: must be at least 1")
	check(c.BatchLinger < 0, "pipeline.batch_linger: must not be negative")
	return errors.Join(errs...)
}
