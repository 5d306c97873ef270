package monitors

import (
	"errors"
	"fmt"
	"time"
)

// Config configures online scorers (the monitors config section).
type Config struct {
	// Enabled queues stored calls of projects with active monitors and
	// runs their scorers. Default true; a project without an active
	// Monitor object costs nothing.
	Enabled bool `yaml:"enabled"`
	// Interval is how often the queue is looked at when it was empty.
	// 1s.
	Interval time.Duration `yaml:"interval"`
	// RefreshInterval is how often the monitors are read again (a
	// monitor published through this process is read at once). 5s.
	RefreshInterval time.Duration `yaml:"refresh_interval"`
	// DailySpendCapUSD caps what each monitor's judges spend per UTC day
	// when its daily_spend_cap_usd is unset; 0 is no cap. 10.
	DailySpendCapUSD float64 `yaml:"daily_spend_cap_usd"`
	// Workers bounds the judges asked at once. 4.
	Workers int `yaml:"workers"`
	// Batch is the most queued calls one round takes. 100.
	Batch int `yaml:"batch"`
	// MaxAttempts bounds the rounds a call waits to be readable, or for
	// a failing judge upstream, before it is given up. 8 (about 4
	// minutes of doubling pauses).
	MaxAttempts int `yaml:"max_attempts"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Enabled: true, Interval: time.Second, RefreshInterval: 5 * time.Second, DailySpendCapUSD: 10,
		Workers: 4, Batch: 100, MaxAttempts: 8}
}

// Validate names every setting that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Interval < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("monitors.interval: %s must be at least 10ms", c.Interval))
	}
	if c.RefreshInterval < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("monitors.refresh_interval: %s must be at least 10ms", c.RefreshInterval))
	}
	if c.DailySpendCapUSD < 0 {
		errs = append(errs, fmt.Errorf("monitors.daily_spend_cap_usd: %v is negative; 0 means no cap", c.DailySpendCapUSD))
	}
	if c.Workers < 1 || c.Workers > 64 {
		errs = append(errs, fmt.Errorf("monitors.workers: %d must be between 1 and 64", c.Workers))
	}
	if c.Batch < 1 || c.Batch > 10_000 {
		errs = append(errs, fmt.Errorf("monitors.batch: %d must be between 1 and 10000", c.Batch))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("monitors.max_attempts: %d must be at least 1", c.MaxAttempts))
	}
	return errors.Join(errs...)
}
