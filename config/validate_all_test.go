package config

import (
	"strings"
	"testing"
	"time"
)

// TestValidateReportsEverySetting breaks one setting in every section
// and, in sections that stopped at their first error before, two: one
// Validate names them all, each by its full key path.
func TestValidateReportsEverySetting(t *testing.T) {
	c := Default()
	c.Listen = "nohost"
	c.DuckDBMemoryMB = 1
	c.DuckDBThreads = -1
	c.WAL.MaxUnappliedOps, c.WAL.SegmentBytes = 0, 1
	c.Pipeline.MaxQueuedOps, c.Pipeline.BatchLinger = 0, -time.Second
	c.OTLP.MaxRequestBytes, c.OTLP.RetryAfter = -1, -time.Second
	c.Retention.Default = -time.Hour
	c.Connections.MaxConnections = 0
	c.Automations.AlertInterval = time.Millisecond
	c.Training.MaxAttempts = 0
	c.TraceMetrics.MaxProjects = 0
	c.Monitors.Workers, c.Monitors.Batch = 0, 0
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted a config broken in every section")
	}
	got := strings.Split(err.Error(), "\n")
	for _, key := range []string{
		"listen:", "duckdb_memory_mb:", "duckdb_threads:",
		"wal.max_unapplied_ops:", "wal.segment_bytes:",
		"pipeline.max_queued_ops:", "pipeline.batch_linger:",
		"otlp.max_request_bytes:", "otlp.retry_after:",
		"retention.default:", "connections.max_connections:", "automations.alert_interval:",
		"training.max_attempts:", "trace_metrics.max_projects:",
		"monitors.workers:", "monitors.batch:",
	} {
		found := false
		for _, line := range got {
			if strings.HasPrefix(line, key) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error starts with %q; got:\n%s", key, err)
		}
	}
}
