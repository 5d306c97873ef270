package config

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/weftdev/weft/exporter/forwardexporter"
)

// AgentConfig is the agent's settings as it runs them: the buffer in
// <data_dir>/buffer unless agent.buffer_dir says otherwise.
func (c Config) AgentConfig() forwardexporter.Config {
	a := c.Agent
	if a.BufferDir == "" {
		a.BufferDir = filepath.Join(c.DataDir, "buffer")
	}
	return a
}

// validateAgent checks the agent role's settings: exactly one upstream
// (a central Weft or Kafka), a valid buffer, and no store.
func (c Config) validateAgent() []error {
	var errs []error
	kafka := len(c.BrokerList()) > 0
	switch {
	case c.Agent.Upstream == "" && !kafka:
		errs = append(errs, errors.New("agent: set --upstream (WEFT_UPSTREAM, agent.upstream) to the central Weft's URL, or kafka_brokers to forward to Kafka"))
	case c.Agent.Upstream != "" && kafka:
		errs = append(errs, errors.New("agent: set either agent.upstream or kafka_brokers, not both"))
	}
	if c.ClickHouseDSN != "" {
		errs = append(errs, errors.New("agent: clickhouse_dsn must be empty; the agent opens no store"))
	}
	if err := c.AgentConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if kafka {
		k := c.Kafka
		k.Brokers = c.BrokerList()
		if err := k.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("kafka: %w", err))
		}
	}
	return errs
}
