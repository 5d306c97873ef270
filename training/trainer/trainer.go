// Package trainer is `weft trainer`: a worker that leases training jobs
// from weft and runs the user's command for each. The command gets the
// job on its standard input (and in $WEFT_TASK_FILE) as a
// protocol.Task, writes its checkpoint under $WEFT_OUTPUT_DIR and prints
// JSON lines (protocol.Line) that become the job's events and
// checkpoint. The trainer heartbeats for it, stops it when the job is
// cancelled or the lease is lost, and finishes the job by how it exited;
// a command that crashes fails its job, never the trainer.
//
// It must never import the server's packages: it is a client of the
// worker protocol only.
package trainer

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"time"
)

// Options configure a trainer.
type Options struct {
	URL, Key string
	// Command runs with `sh -c` for every job.
	Command string
	// Worker names this worker to weft; default the host name.
	Worker string
	// WorkDir holds each job's files while it runs.
	WorkDir string
	// Wait is how long one lease request waits for a job.
	Wait time.Duration
	// KillGrace is how long a stopped command gets between SIGTERM and
	// SIGKILL.
	KillGrace time.Duration
	// MaxLineBytes bounds one output line of the command.
	MaxLineBytes int
	Logger       *slog.Logger
	HTTP         *http.Client
}

// Trainer leases jobs and runs the command for each, one at a time.
type Trainer struct {
	o Options
	c *Client
}

// New checks the options and builds a trainer.
func New(o Options) (*Trainer, error) {
	if o.URL == "" || o.Key == "" || o.Command == "" {
		return nil, errors.New("trainer: --url, --key and --command are required")
	}
	if o.Worker == "" {
		o.Worker, _ = os.Hostname()
	}
	if o.WorkDir == "" {
		o.WorkDir = os.TempDir()
	}
	if o.Wait <= 0 {
		o.Wait = 30 * time.Second
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 10 * time.Second
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 1 << 20
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: o.Wait + time.Minute}
	}
	return &Trainer{o: o, c: NewClient(o.URL, o.Key, o.HTTP)}, nil
}

// Run leases and works jobs until ctx ends. Errors talking to weft are
// retried with backoff; an unusable key stops it.
func (t *Trainer) Run(ctx context.Context) error {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		l, err := t.c.Lease(ctx, t.o.Worker, t.o.Wait)
		var apiErr *APIError
		switch {
		case ctx.Err() != nil:
		case errors.As(err, &apiErr) && (apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden):
			return err
		case err != nil:
			t.o.Logger.Warn("leasing a job failed; retrying with a growing pause (up to 30s); if it repeats, check that --url reaches weft and weft is up", "err", err, "in", pause)
			sleep(ctx, pause+rand.N(pause))
			pause = min(2*pause, 30*time.Second)
		case l != nil:
			pause = 100 * time.Millisecond
			t.work(ctx, l)
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
