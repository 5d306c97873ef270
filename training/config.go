package training

import (
	"errors"
	"fmt"
	"time"
)

// Config is the training service's section of the configuration file
// (training:).
type Config struct {
	// BaseModels are the models that can be trained; creating a model of
	// another base model is refused. Default none.
	BaseModels []string `yaml:"base_models"`
	// LeaseTTL is how long a lease lasts without a heartbeat. 30s.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// MaxAttempts is how many leases a job gets before a lease that ends
	// without the job finishing fails it. 3.
	MaxAttempts int `yaml:"max_attempts"`
	// MaxLeaseWait caps how long a lease request waits for a job. 30s.
	MaxLeaseWait time.Duration `yaml:"max_lease_wait"`
	// CommandsTopic is the job queue's Kafka log in a scale-out
	// deployment; it has one partition. Default weft.training-commands.
	CommandsTopic string `yaml:"commands_topic"`
	// SnapshotInterval is how often a replica writes the queue's state,
	// from which a replica starts. 30s.
	SnapshotInterval time.Duration `yaml:"snapshot_interval"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{LeaseTTL: 30 * time.Second, MaxAttempts: 3, MaxLeaseWait: 30 * time.Second,
		CommandsTopic: "weft.training-commands", SnapshotInterval: 30 * time.Second}
}

// Validate reports every setting that cannot work, naming its key.
func (c Config) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, m := range c.BaseModels {
		if m == "" || seen[m] {
			errs = append(errs, fmt.Errorf("training.base_models[%d]: %q must be a model name listed once, e.g. OpenPipe/Qwen3-14B-Instruct", i, m))
		}
		seen[m] = true
	}
	if c.LeaseTTL < time.Second {
		errs = append(errs, fmt.Errorf("training.lease_ttl: %s must be at least 1s", c.LeaseTTL))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("training.max_attempts: %d must be at least 1", c.MaxAttempts))
	}
	if c.MaxLeaseWait < 0 || c.MaxLeaseWait > 10*time.Minute {
		errs = append(errs, fmt.Errorf("training.max_lease_wait: %s must be between 0 and 10m", c.MaxLeaseWait))
	}
	if c.CommandsTopic == "" {
		errs = append(errs, errors.New("training.commands_topic: must not be empty"))
	}
	if c.SnapshotInterval < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("training.snapshot_interval: %s must be at least 100ms", c.SnapshotInterval))
	}
	return errors.Join(errs...)
}

// HeartbeatInterval is how often workers are told to send heartbeats: a
// third of the lease, so two can be lost before it ends.
func (c Config) HeartbeatInterval() time.Duration { return c.LeaseTTL / 3 }
