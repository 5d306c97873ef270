package storageexporter

import (
	"errors"
	"fmt"
)

// Config shapes the storage exporter. Its YAML keys live under `wal:` in
// weft.yaml.
type Config struct {
	// Enabled puts the write-ahead log in front of the store: a batch is
	// acknowledged once it is fsynced to the log, and written to the store
	// behind it in large transactions. Default true on the embedded store;
	// ClickHouse, durable on its own, is written directly.
	Enabled bool `yaml:"enabled"`
	// Dir holds the log's segment files. Default <data_dir>/wal.
	Dir string `yaml:"dir"`
	// MaxUnappliedOps bounds call records acknowledged but not yet in the
	// store; beyond it writes get 429. Default 2000000.
	MaxUnappliedOps int `yaml:"max_unapplied_ops"`
	// MaxUnappliedBytes bounds the log bytes they take on disk (they are
	// read back from the log, not held in memory). Default 1 GiB.
	MaxUnappliedBytes int64 `yaml:"max_unapplied_bytes"`
	// SegmentBytes is the size of one log file. Default 64 MiB.
	SegmentBytes int64 `yaml:"segment_bytes"`
	// MaxApplyOps is the most call records written to the store in one
	// transaction. Default 50000.
	MaxApplyOps int `yaml:"max_apply_ops"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Enabled:           true,
		MaxUnappliedOps:   2_000_000,
		MaxUnappliedBytes: 1 << 30,
		SegmentBytes:      64 << 20,
		MaxApplyOps:       50_000,
	}
}

// Validate reports settings that cannot work, naming the key.
func (c Config) Validate() error {
	if !c.Enabled {
		return nil
	}
	switch {
	case c.Dir == "":
		return errors.New("wal.dir must be set when wal.enabled is true")
	case c.MaxUnappliedOps < 1:
		return errors.New("wal.max_unapplied_ops must be at least 1")
	case c.MaxUnappliedBytes < 1<<20:
		return fmt.Errorf("wal.max_unapplied_bytes must be at least %d (1 MiB)", 1<<20)
	case c.SegmentBytes < 1<<20:
		return fmt.Errorf("wal.segment_bytes must be at least %d (1 MiB)", 1<<20)
	case c.MaxApplyOps < 1:
		return errors.New("wal.max_apply_ops must be at least 1")
	}
	return nil
}
