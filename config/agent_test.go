package config

import (
	"strings"
	"testing"
)

func TestAgentValidation(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantSub string // "" means valid
	}{
		{"upstream", []string{"--roles", "agent", "--upstream", "http://weft:6345"}, nil, ""},
		{"kafka", []string{"--roles", "agent", "--kafka-brokers", "k1:9092"}, nil, ""},
		{"key from the environment", []string{"--roles", "agent"}, map[string]string{"WEFT_UPSTREAM": "https://w", "WEFT_AGENT_API_KEY": "k"}, ""},
		{"no upstream", []string{"--roles", "agent"}, nil, "--upstream"},
		{"both upstreams", []string{"--roles", "agent", "--upstream", "http://w", "--kafka-brokers", "k:9092"}, nil, "not both"},
		{"not a URL", []string{"--roles", "agent", "--upstream", "weft:6345"}, nil, "agent.upstream"},
		{"with a store", []string{"--roles", "agent", "--upstream", "http://w", "--clickhouse-dsn", "http://ch/db"}, nil, "opens no store"},
		{"with other roles", []string{"--roles", "agent,ingest", "--upstream", "http://w"}, nil, "agent runs alone"},
		{"tiny buffer", []string{"--roles", "agent", "--upstream", "http://w", "--config", "FILE:agent:\n  max_buffer_bytes: 1000\n"}, nil, "agent.max_buffer_bytes"},
		{"no requests in flight", []string{"--roles", "agent", "--upstream", "http://w", "--config", "FILE:agent:\n  max_in_flight: 0\n"}, nil, "agent.max_in_flight"},
		{"bad OTLP topic mapping", []string{"--config", "FILE:kafka_otlp:\n  topic: otlp_spans\n  projects: {svc: nope}\n"}, nil, "kafka_otlp.projects"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(fileArgs(t, tc.args), env(tc.env))
			if tc.wantSub == "" {
				if err != nil {
					t.Fatalf("Load = %v, want a valid agent config", err)
				}
				if cfg.AgentConfig().BufferDir == "" {
					t.Fatal("the buffer dir has no default")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("Load = %v, want an error containing %q", err, tc.wantSub)
			}
		})
	}
}
