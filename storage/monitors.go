package storage

import (
	"context"
	"time"
)

// Monitor result statuses: the scorer gave a verdict (stored as feedback),
// failed for good (its message says why), was skipped (the monitor's
// daily spend cap was reached), or failed in a way that may pass and is
// tried again (retrying, the one status that is not final).
const (
	MonitorScored   = "scored"
	MonitorFailed   = "failed"
	MonitorSkipped  = "skipped"
	MonitorRetrying = "retrying"
)

// MonitorCall is a stored call waiting for its project's monitors: queued
// when its end was stored, taken by the monitors' runner once NextAt has
// come, and removed when every monitor has dealt with it.
type MonitorCall struct {
	ProjectID string
	CallID    string
	QueuedAt  time.Time
	// Attempts counts the rounds that had to put the call off (not yet
	// readable, or a judge that failed in a way worth retrying).
	Attempts int
	NextAt   time.Time
}

// MonitorResult is what one scorer version made of one call. It is keyed
// by (project, call, scorer ref): the ref holds the scorer's digest, so a
// call is scored at most once per scorer version.
type MonitorResult struct {
	ProjectID string
	CallID    string
	ScorerRef string
	// Monitor is the name (object id) of the monitor that applied the
	// scorer; MonitorRef the version it was.
	Monitor    string
	MonitorRef string
	Status     string
	Message    string
	CostUSD    float64
	At         time.Time
}

// MonitorStats sums one monitor's results since a time.
type MonitorStats struct {
	Monitor                 string
	Scored, Failed, Skipped int64
	CostUSD                 float64
	LastAt                  *time.Time
}

// MonitorStore keeps the queue of stored calls that monitors score and
// the ledger of their results. The queue is written by the process that
// stores calls, before it counts them stored; the ledger by the one
// process that holds the monitors lease (ClaimLease).
type MonitorStore interface {
	// EnqueueMonitorCalls queues calls; a call already queued keeps its
	// place.
	EnqueueMonitorCalls(ctx context.Context, calls []MonitorCall) error
	// PendingMonitorCalls returns up to limit queued calls whose NextAt
	// is not after now, oldest first.
	PendingMonitorCalls(ctx context.Context, now time.Time, limit int) ([]MonitorCall, error)
	// DeferMonitorCalls stores new Attempts and NextAt of queued calls.
	DeferMonitorCalls(ctx context.Context, calls []MonitorCall) error
	// RemoveMonitorCalls takes calls off the queue.
	RemoveMonitorCalls(ctx context.Context, calls []MonitorCall) error
	// RecordMonitorResults stores results; a result already stored for
	// the same call and scorer ref is replaced.
	RecordMonitorResults(ctx context.Context, results []MonitorResult) error
	// MonitorResults returns a project's stored results for callIDs.
	MonitorResults(ctx context.Context, projectID string, callIDs []string) ([]MonitorResult, error)
	// MonitorStats sums a project's results since a time, per monitor.
	MonitorStats(ctx context.Context, projectID string, since time.Time) ([]MonitorStats, error)
	// MonitorFailures returns a project's newest results that are not
	// scored (failed or skipped), newest first, at most limit.
	MonitorFailures(ctx context.Context, projectID string, limit int) ([]MonitorResult, error)
	// ProjectsWithObjectClass lists up to limit projects that hold a
	// live object version of the base class.
	ProjectsWithObjectClass(ctx context.Context, baseClass string, limit int) ([]string, error)
}
