package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Role names, as --roles takes them.
const (
	RoleIngest  = "ingest"
	RoleProcess = "process"
	RoleQuery   = "query"
	// RoleAgent runs alone: receivers and a disk buffer forwarding to a
	// central Weft or to Kafka; no store.
	RoleAgent = "agent"
)

// AllRoles is the default: one process does everything.
const AllRoles = RoleIngest + "," + RoleProcess + "," + RoleQuery

// Roles says which parts of the pipeline this process runs.
type Roles struct {
	// Ingest: receivers (Weave writes, OTLP) and content writes.
	Ingest bool
	// Process: consumes the Kafka topic into storage.
	Process bool
	// Query: the read API.
	Query bool
	// Agent: receivers, disk buffer and forwarder, and nothing else.
	Agent bool
}

// All reports whether every role runs here.
func (r Roles) All() bool { return r.Ingest && r.Process && r.Query }

// ParseRoles reads a comma-separated role list.
func ParseRoles(s string) (Roles, error) {
	var r Roles
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case RoleIngest:
			r.Ingest = true
		case RoleProcess:
			r.Process = true
		case RoleQuery:
			r.Query = true
		case RoleAgent:
			r.Agent = true
		case "":
		default:
			return r, fmt.Errorf("roles: %q is not one of ingest, process, query, agent", name)
		}
	}
	if r.Agent && (r.Ingest || r.Process || r.Query) {
		return r, errors.New("roles: agent runs alone; start the other roles in their own processes")
	}
	if r.Agent {
		return r, nil
	}
	if !r.Ingest && !r.Process && !r.Query {
		return r, errors.New("roles: name at least one of ingest, process, query")
	}
	return r, nil
}

// BrokerList splits kafka_brokers.
func (c Config) BrokerList() []string {
	var out []string
	for _, b := range strings.Split(c.KafkaBrokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// validateScaleOut checks that the roles have the services they need:
// splitting ingest from process needs Kafka between them, and any shared
// deployment needs ClickHouse so every role sees the same state.
func (c Config) validateScaleOut() []error {
	roles, err := ParseRoles(c.Roles)
	if err != nil {
		return []error{err}
	}
	if roles.Agent {
		return c.validateAgent()
	}
	var errs []error
	kafka, ch := len(c.BrokerList()) > 0, c.ClickHouseDSN != ""
	if kafka && !ch {
		errs = append(errs, errors.New("kafka_brokers needs clickhouse_dsn: processors write to ClickHouse so every role shares one store"))
	}
	if !roles.All() && !ch {
		errs = append(errs, fmt.Errorf("roles %q: running a subset of roles needs clickhouse_dsn (and kafka_brokers for ingest or process)", c.Roles))
	}
	if (roles.Ingest != roles.Process) && !kafka {
		errs = append(errs, fmt.Errorf("roles %q: ingest and process in different processes need kafka_brokers between them", c.Roles))
	}
	if kafka {
		k := c.Kafka
		k.Brokers = c.BrokerList()
		errs = append(errs, k.Validate()) // each error names its kafka.* key
	}
	if err := c.KafkaOTLP.Validate(); err != nil {
		errs = append(errs, err)
	}
	if slices.Contains(strings.Split(c.Roles, ","), "") && c.Roles != "" {
		errs = append(errs, fmt.Errorf("roles %q: empty role name", c.Roles))
	}
	return errs
}
