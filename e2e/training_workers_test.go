package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// pages follows a list from path (which has a query already) to its
// last page and returns every item.
func pages[T any](a *artClient, path string) []T {
	a.t.Helper()
	var all []T
	for cursor := ""; ; {
		var page artPage[T]
		p := path
		if cursor != "" {
			p += "&after=" + url.QueryEscape(cursor)
		}
		a.call(http.MethodGet, p, nil, &page, http.StatusOK)
		all = append(all, page.Data...)
		if !page.HasMore {
			return all
		}
		cursor = page.LastID
	}
}

// jobEvents lists every event of a job.
func (a *artClient) jobEvents(jobID string) []artEvent {
	return pages[artEvent](a, "/preview/training-jobs/"+jobID+"/events?limit=100")
}

func countTypes(evs []artEvent) map[string]int {
	n := map[string]int{}
	for _, e := range evs {
		n[e.Type]++
	}
	return n
}

// poll calls done every 50ms until it is true, failing after 30s.
func (a *artClient) poll(what string, done func() bool) {
	a.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			a.t.Fatalf("after 30s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStatus waits until the job has one of the statuses.
func (a *artClient) waitStatus(jobID string, statuses ...string) map[string]any {
	a.t.Helper()
	var j map[string]any
	a.poll("job "+jobID+" is not "+strings.Join(statuses, " or "), func() bool {
		a.call(http.MethodGet, "/preview/training-jobs/"+jobID, nil, &j, http.StatusOK)
		return slices.Contains(statuses, fmt.Sprint(j["status"]))
	})
	return j
}

// waitEvents waits until the job has at least n events.
func (a *artClient) waitEvents(jobID string, n int) {
	a.t.Helper()
	a.poll(fmt.Sprintf("job %s has fewer than %d events", jobID, n), func() bool { return len(a.jobEvents(jobID)) >= n })
}

func (a *artClient) newJob(modelID string, groups int) string {
	a.t.Helper()
	var job struct{ ID string }
	a.call(http.MethodPost, "/preview/training-jobs", map[string]any{"model_id": modelID, "trajectory_groups": trajectoryGroups(groups)},
		&job, http.StatusOK)
	return job.ID
}

// TestKilledWorkerJobIsRequeued: a worker killed mid-job (SIGKILL, its
// command with it) stops heartbeating; its lease ends, the job is queued
// again and another worker finishes it, with one terminal event.
func TestKilledWorkerJobIsRequeued(t *testing.T) {
	w := startTrainingWeft(t)
	art := newART(t, w.weft.URL, w.member)
	model := art.register("p", "agent")
	slow := startTrainer(t, w.weft.URL, w.worker, "doomed", "--step-delay", "300ms")
	job := art.newJob(model.ID, 20)
	art.waitEvents(job, 3)
	slow.kill()
	startTrainer(t, w.weft.URL, w.worker, "rescuer", "--step-delay", "5ms")
	art.waitStatus(job, "succeeded")
	n := countTypes(art.jobEvents(job))
	if n["training_started"] != 2 || n["training_ended"] != 1 || n["training_failed"] != 0 || n["gradient_step"] < 22 {
		t.Fatalf("events of the job after the rescue: %v", n)
	}
	if got := art.latestStep(model.ID); got != 1 {
		t.Fatalf("latest step = %d, want 1", got)
	}
}

// TestCancelStopsTheCommand: cancelling a running job reaches its worker
// at the next heartbeat; the command is stopped and the job ends
// cancelled with a training_failed event, once. A queued job cancels at
// once, and an ended one cannot be cancelled.
func TestCancelStopsTheCommand(t *testing.T) {
	w := startTrainingWeft(t)
	art := newART(t, w.weft.URL, w.member)
	model := art.register("p", "agent")
	tp := startTrainer(t, w.weft.URL, w.worker, "gpu-0", "--step-delay", "300ms")
	job := art.newJob(model.ID, 50)
	queued := art.newJob(model.ID, 1)
	art.waitEvents(job, 2)
	art.call(http.MethodPost, "/preview/training-jobs/"+queued+"/cancel", nil, nil, http.StatusOK)
	var cancelled map[string]any
	art.call(http.MethodPost, "/preview/training-jobs/"+job+"/cancel", nil, &cancelled, http.StatusOK)
	if cancelled["status"] != "running" {
		t.Fatalf("a running job answered cancel with %v", cancelled)
	}
	start := time.Now()
	j := art.waitStatus(job, "cancelled", "succeeded", "failed")
	if j["status"] != "cancelled" || time.Since(start) > 10*time.Second {
		t.Fatalf("job = %v after %s", j, time.Since(start))
	}
	evs := art.jobEvents(job)
	last := evs[len(evs)-1]
	n := countTypes(evs)
	if last.Type != "training_failed" || !strings.Contains(string(last.Data["error_message"]), "cancelled") || n["training_failed"] != 1 || n["gradient_step"] >= 50 {
		t.Fatalf("events end %+v (%v)", last, n)
	}
	art.waitStatus(queued, "cancelled")
	art.call(http.MethodPost, "/preview/training-jobs/"+job+"/cancel", nil, nil, http.StatusConflict)
	if !strings.Contains(tp.stderr.String(), "the job was cancelled; stopping the command") {
		t.Fatalf("the trainer did not stop the command:\n%s", tp.stderr)
	}
}

// TestTwoTrainersShareTheQueue: two workers lease from one queue at once;
// every job runs once, to success, and each worker ran some.
func TestTwoTrainersShareTheQueue(t *testing.T) {
	w := startTrainingWeft(t)
	art := newART(t, w.weft.URL, w.member)
	var jobs []string
	for i := range 6 {
		model := art.register("p", fmt.Sprintf("agent-%d", i))
		jobs = append(jobs, art.newJob(model.ID, 3))
	}
	a := startTrainer(t, w.weft.URL, w.worker, "gpu-a", "--step-delay", "100ms")
	b := startTrainer(t, w.weft.URL, w.worker, "gpu-b", "--step-delay", "100ms")
	for _, job := range jobs {
		art.waitStatus(job, "succeeded")
		if n := countTypes(art.jobEvents(job)); n["training_started"] != 1 || n["gradient_step"] != 3 || n["training_ended"] != 1 {
			t.Fatalf("job %s events %v: it ran more than once", job, n)
		}
	}
	leased := strings.Count(a.stderr.String(), "leased a job") + strings.Count(b.stderr.String(), "leased a job")
	if leased != len(jobs) || !strings.Contains(a.stderr.String(), "leased a job") || !strings.Contains(b.stderr.String(), "leased a job") {
		t.Fatalf("%d leases for %d jobs; logs:\n%s\n%s", leased, len(jobs), a.stderr, b.stderr)
	}
}

// TestTrainerSurvivesACrashingCommand: a command that dies by a signal
// fails its job with the end of its standard error, one that reports a
// failure fails it with its message, and the trainer goes on to run the
// next job to success.
func TestTrainerSurvivesACrashingCommand(t *testing.T) {
	w := startTrainingWeft(t)
	art := newART(t, w.weft.URL, w.member)
	model := art.register("p", "agent")
	var crash struct{ ID string }
	groups := trajectoryGroups(2)
	groups[0].(map[string]any)["metadata"] = map[string]any{"note": "crash-me"}
	art.call(http.MethodPost, "/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups}, &crash, http.StatusOK)
	failing := art.newJob(model.ID, 3)
	healthy := art.newJob(model.ID, 2)
	example := exampleTrainer(t)
	startTrainerCommand(t, w.weft.URL, w.worker, "gpu-0", fmt.Sprintf(
		`if grep -q crash-me "$WEFT_TASK_FILE"; then echo boom >&2; kill -SEGV $$; fi; `+
			`if [ "$WEFT_JOB_ID" = %q ]; then exec %s --fail-at 2; fi; exec %s`, failing, example, example))
	for _, tc := range []struct{ job, want string }{{crash.ID, "boom"}, {failing, "failed at gradient step 2"}} {
		j := art.waitStatus(tc.job, "failed", "succeeded")
		if j["status"] != "failed" || !strings.Contains(fmt.Sprint(j["error_message"]), tc.want) {
			t.Fatalf("job = %v, want failed with %q", j, tc.want)
		}
		evs := art.jobEvents(tc.job)
		if last := evs[len(evs)-1]; last.Type != "training_failed" || !strings.Contains(string(last.Data["error_message"]), tc.want) {
			t.Fatalf("last event %+v", last)
		}
	}
	art.waitStatus(healthy, "succeeded")
}
