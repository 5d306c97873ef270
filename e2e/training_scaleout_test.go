package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestTrainingAcrossReplicas runs the training service on Kafka and
// ClickHouse with two API replicas: jobs are created through either,
// each replica serves a worker, and every job runs exactly once,
// whichever replica its worker leased it from; events and checkpoints
// read through the other replica.
func TestTrainingAcrossReplicas(t *testing.T) {
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	cfg := writeRoleConfig(t, fmt.Sprintf("training:\n  base_models: [%s]\n  lease_ttl: 3s\n  snapshot_interval: 500ms\n", trainBase))
	a := startRoleWith(t, cfg, "ingest,process", kafka, dsn)
	b := startRoleWith(t, cfg, "query", kafka, dsn)
	member, worker := cliKey(t, "--clickhouse-dsn", dsn, "member"), cliKey(t, "--clickhouse-dsn", dsn, "worker")
	arts := []*artClient{newART(t, a.URL, member), newART(t, b.URL, member)}
	var jobs []string
	var models []artModel
	for i := range 6 {
		m := arts[i%2].register("p", fmt.Sprintf("agent-%d", i))
		models = append(models, m)
		jobs = append(jobs, arts[i%2].newJob(m.ID, 3))
	}
	ta := startTrainer(t, a.URL, worker, "gpu-a", "--step-delay", "50ms")
	tb := startTrainer(t, b.URL, worker, "gpu-b", "--step-delay", "50ms")
	for i, job := range jobs {
		other := arts[(i+1)%2]
		other.waitStatus(job, "succeeded")
		if n := countTypes(other.jobEvents(job)); n["training_started"] != 1 || n["gradient_step"] != 3 || n["training_ended"] != 1 {
			t.Fatalf("job %s events %v: it ran more than once", job, n)
		}
		if got := other.latestStep(models[i].ID); got != 1 {
			t.Fatalf("model %d latest step %d through the other replica, want 1", i, got)
		}
	}
	la, lb := strings.Count(ta.stderr.String(), "leased a job"), strings.Count(tb.stderr.String(), "leased a job")
	if la+lb != len(jobs) || la == 0 || lb == 0 {
		t.Fatalf("leases: %d through one replica, %d through the other, for %d jobs; logs:\n%s\n%s", la, lb, len(jobs), ta.stderr, tb.stderr)
	}
	var checks map[string]struct{ Success bool }
	arts[1].call(http.MethodGet, "/system-check", nil, &checks, http.StatusOK)
	if !checks["job_queue"].Success || !checks["database"].Success {
		t.Fatalf("system check through the query replica: %+v", checks)
	}
}
