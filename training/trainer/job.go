package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftdev/weft/training/protocol"
)

// job is one leased job being worked.
type job struct {
	t         *Trainer
	l         *protocol.Lease
	log       *slog.Logger
	dir       string
	task      protocol.Task
	cancelled atomic.Bool
	lost      atomic.Bool
	mu        sync.Mutex
	failure   string // from a failed line or a refused checkpoint
	stderr    *tail
	stop      func() // stops the command (SIGTERM, then SIGKILL)
}

// work runs the command for one lease and finishes the job.
func (t *Trainer) work(ctx context.Context, l *protocol.Lease) {
	j := &job{t: t, l: l, log: t.o.Logger.With("job", l.Job.ID, "attempt", l.Job.Attempt), stderr: &tail{max: 4096}}
	j.log.Info("leased a job", "model", l.Model.Name, "target_step", l.Job.TargetStep)
	if err := j.prepare(ctx); err != nil {
		j.finish(ctx, protocol.Finish{Status: "failed", ErrorMessage: "the trainer could not prepare the job: " + err.Error()})
		return
	}
	defer os.RemoveAll(j.dir)
	exitErr := j.run(ctx)
	j.finish(ctx, j.outcome(exitErr))
}

// prepare makes the job's directory, fetches the previous checkpoint and
// writes the task.
func (j *job) prepare(ctx context.Context) error {
	j.dir = filepath.Join(j.t.o.WorkDir, fmt.Sprintf("weft-job-%s-%d", j.l.Job.ID, j.l.Job.Attempt))
	j.task = protocol.Task{Job: j.l.Job, Model: j.l.Model, Input: j.l.Input, PreviousCheckpoint: j.l.PreviousCheckpoint,
		OutputDir: filepath.Join(j.dir, "output")}
	if err := os.MkdirAll(j.task.OutputDir, 0o700); err != nil {
		return err
	}
	if prev := j.l.PreviousCheckpoint; prev != nil {
		j.task.PreviousCheckpointDir = filepath.Join(j.dir, "previous")
		for name, f := range prev.Files {
			dst := filepath.Join(j.task.PreviousCheckpointDir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				return err
			}
			if err := j.t.c.Download(ctx, j.l.Job.ID, j.l.LeaseID, f.Digest, dst); err != nil {
				return fmt.Errorf("downloading %s of the previous checkpoint: %w", name, err)
			}
		}
	}
	raw, err := json.Marshal(j.task)
	if err != nil {
		return err
	}
	return os.WriteFile(j.taskFile(), raw, 0o600)
}

func (j *job) taskFile() string { return filepath.Join(j.dir, "task.json") }

// run starts the command, heartbeats while it runs, reads its output
// and returns how it exited.
func (j *job) run(ctx context.Context) error {
	cmd := exec.Command("sh", "-c", j.t.o.Command)
	cmd.Dir = j.dir
	cmd.Env = append(os.Environ(), "WEFT_TASK_FILE="+j.taskFile(), "WEFT_OUTPUT_DIR="+j.task.OutputDir,
		"WEFT_JOB_ID="+j.l.Job.ID, "WEFT_TARGET_STEP="+strconv.FormatInt(j.l.Job.TargetStep, 10))
	stdin, err := os.Open(j.taskFile())
	if err != nil {
		return err
	}
	defer stdin.Close()
	cmd.Stdin, cmd.Stderr = stdin, teeTail{j.stderr, os.Stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %q: %w", j.t.o.Command, err)
	}
	j.stop = stopper(cmd, j.t.o.KillGrace)
	// The trainer stopping stops the command; the job is left to weft,
	// which leases it again once the lease ends.
	unwatch := context.AfterFunc(ctx, func() { j.lost.Store(true); j.stop() })
	defer unwatch()
	hctx, stopBeats := context.WithCancel(ctx)
	beats := make(chan struct{})
	go func() { j.heartbeats(hctx); close(beats) }()
	j.readOutput(ctx, out)
	err = cmd.Wait()
	stopBeats()
	<-beats
	return err
}

// heartbeats extends the lease until ctx ends. A cancel or a lost lease
// stops the command; so does going a lease's length without a
// successful heartbeat, since weft may have leased the job again.
func (j *job) heartbeats(ctx context.Context) {
	every := time.Duration(j.l.HeartbeatSeconds * float64(time.Second))
	ttl := time.Duration(j.l.LeaseSeconds * float64(time.Second))
	last := time.Now()
	t := time.NewTicker(max(every, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		a, err := j.t.c.Heartbeat(ctx, j.l.Job.ID, j.l.LeaseID)
		switch {
		case ctx.Err() != nil:
			return
		case LeaseLost(err) || (err != nil && time.Since(last) > ttl-every/2):
			j.log.Warn("the job's lease is lost (no heartbeat got through within training.lease_ttl); stopping the command; weft leases the job again up to training.max_attempts; check the network between this worker and weft", "err", err)
			j.lost.Store(true)
			j.stop()
			return
		case err != nil:
			j.log.Warn("heartbeat failed; retrying at the next beat; the lease is lost if none gets through within training.lease_ttl; if it repeats, check that --url reaches weft", "err", err)
		case a.CancelRequested:
			j.log.Info("the job was cancelled; stopping the command")
			j.cancelled.Store(true)
			j.stop()
			return
		default:
			last = sent
		}
	}
}

// outcome is how the job ends, from what happened and how the command
// exited.
func (j *job) outcome(exitErr error) protocol.Finish {
	j.mu.Lock()
	failure := j.failure
	j.mu.Unlock()
	switch {
	case j.cancelled.Load():
		return protocol.Finish{Status: "cancelled"}
	case failure != "":
		return protocol.Finish{Status: "failed", ErrorMessage: failure}
	case exitErr != nil:
		return protocol.Finish{Status: "failed", ErrorMessage: fmt.Sprintf("the command %v; its last output: %s", exitErr, j.stderr.String())}
	}
	return protocol.Finish{Status: "succeeded"}
}

// finish ends the job, retrying while weft cannot be reached. A job whose
// lease is lost is left to weft.
func (j *job) finish(ctx context.Context, f protocol.Finish) {
	if j.lost.Load() {
		return
	}
	pause := 200 * time.Millisecond
	for attempt := 0; attempt < 8 && ctx.Err() == nil; attempt++ {
		err := j.t.c.Finish(ctx, j.l.Job.ID, j.l.LeaseID, f)
		switch {
		case err == nil:
			j.log.Info("finished the job", "status", f.Status)
			return
		case LeaseLost(err) && f.Status == "succeeded":
			// Refused: most likely no checkpoint of the target step.
			f = protocol.Finish{Status: "failed", ErrorMessage: fmt.Sprintf(
				"the command exited 0 without a checkpoint of step %d: %v", j.l.Job.TargetStep, err)}
			continue
		case LeaseLost(err):
			j.log.Warn("weft refused to finish the job (its lease was lost); this run's result is dropped and weft leases the job again up to training.max_attempts", "err", err)
			return
		}
		j.log.Warn("finishing the job failed; retrying with a doubling pause; if it repeats, check that --url reaches weft", "err", err)
		sleep(ctx, pause)
		pause *= 2
	}
}
