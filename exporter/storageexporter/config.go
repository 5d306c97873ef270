package storageexporter

import (
	"errors"
	"fmt"
	"time"
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
	// RecordAttempts is how many times a record the store refuses on its
	// own, while it still takes other writes, is written before it is set
	// aside in the rejected file. A store that takes no write at all is
	// retried for as long as that lasts instead. Default 5.
	RecordAttempts int `yaml:"record_attempts"`
	// RecordBackoff is the pause before a refused record's second
	// attempt; it doubles for each one after. Default 500ms.
	RecordBackoff time.Duration `yaml:"record_backoff"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Enabled:           true,
		MaxUnappliedOps:   2_000_000,
		MaxUnappliedBytes: 1 << 30,
		SegmentBytes:      64 << 20,
		MaxApplyOps:       50_000,
		RecordAttempts:    5,
		RecordBackoff:     500 * time.Millisecond,
	}
}

// Validate reports settings that cannot work, naming the key.
func (c Config) Validate() error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Dir == "", "wal.dir: must be set when wal.enabled is true")
	check(c.MaxUnappliedOps < 1, "wal.max_unapplied_ops: must be at least 1")
	check(c.MaxUnappliedBytes < 1<<20, "wal.max_unapplied_bytes: must be at least %d (1 MiB)", 1<<20)
	check(c.SegmentBytes < 1<<20, "wal.segment_bytes: must be at least %d (1 MiB)", 1<<20)
	check(c.MaxApplyOps < 1, "wal.max_apply_ops: must be at least 1")
	check(c.RecordAttempts < 0, "wal.record_attempts: must not be negative (0 means the default, 5)")
	check(c.RecordBackoff < 0, "wal.record_backoff: must not be negative (0 means the default, 500ms)")
	return errors.Join(errs...)
}

// withDefaults fills the settings a Config built by hand leaves zero.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.RecordAttempts == 0 {
		c.RecordAttempts = d.RecordAttempts
	}
	if c.RecordBackoff == 0 {
		c.RecordBackoff = d.RecordBackoff
	}
	return c
}
