package jobs

import (
	"encoding/json"
	"time"

	"github.com/weftdev/weft/storage"
)

// Kind names what a command does.
type Kind string

// Command kinds.
const (
	// KindCreate queues a new job.
	KindCreate Kind = "create"
	// KindLease hands the oldest queued job of the worker's entity to it.
	KindLease Kind = "lease"
	// KindHeartbeat extends a lease and tells the worker about a cancel.
	KindHeartbeat Kind = "heartbeat"
	// KindAppend adds progress events under a lease.
	KindAppend Kind = "append"
	// KindCheckpoint checks (Step > 0, Record false) or records (Record
	// true) a checkpoint under a lease.
	KindCheckpoint Kind = "checkpoint"
	// KindFinish ends a job under its lease with an outcome.
	KindFinish Kind = "finish"
	// KindCancel cancels a queued job, or asks the worker of a running one
	// to stop.
	KindCancel Kind = "cancel"
	// KindTick advances time: leases that ended are re-queued or failed.
	KindTick Kind = "tick"
	// KindPing changes nothing; its answer proves the queue applies
	// commands.
	KindPing Kind = "ping"
)

// Outcomes a worker finishes a job with.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// Command is one change to the queue. Its fields are what the change
// needs and nothing else: the queue reads no clock (At is the
// submitter's) and no storage, so applying the same commands in the same
// order gives the same answers everywhere. A command's ID is unique; a
// lease granted by a lease command has the command's ID as its lease ID.
type Command struct {
	ID      string        `json:"id"`
	At      time.Time     `json:"at"`
	Kind    Kind          `json:"kind"`
	JobID   string        `json:"job_id,omitempty"`
	LeaseID string        `json:"lease_id,omitempty"`
	TTL     time.Duration `json:"ttl,omitempty"`

	// Create: the job (JobID) to queue, created At, and the model's
	// latest checkpoint step.
	ProjectID   string `json:"project_id,omitempty"`
	ModelID     string `json:"model_id,omitempty"`
	JobKind     string `json:"job_kind,omitempty"`
	MaxAttempts int    `json:"max_attempts,omitempty"`
	LatestStep  int64  `json:"latest_step,omitempty"`

	// Lease: the worker's entity ("*" leases any entity's jobs) and name.
	Entity string `json:"entity,omitempty"`
	Worker string `json:"worker,omitempty"`

	// Append: events numbered From, From+1, ... by the worker within its
	// lease; numbers already applied are skipped.
	From   int64      `json:"from,omitempty"`
	Events []NewEvent `json:"events,omitempty"`

	// Checkpoint: the step, and whether the checkpoint is stored now.
	Step   int64 `json:"step,omitempty"`
	Record bool  `json:"record,omitempty"`

	// Finish: the outcome and, for a failure, why.
	Outcome      string `json:"outcome,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// NewEvent is an event as a worker sends it.
type NewEvent struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Code says why a command was refused.
type Code string

// Refusal codes.
const (
	// NotOpen: the job is not queued or running here (finished, or
	// unknown); the caller looks at the stored job to say which.
	NotOpen Code = "not_open"
	// LeaseLost: the lease is not the job's current one, or it ended.
	LeaseLost Code = "lease_lost"
	// NotReady: the job cannot finish that way yet.
	NotReady Code = "not_ready"
	// Invalid: the command contradicts the job (e.g. a step below it).
	Invalid Code = "invalid"
)

// Refusal is a command the queue did not apply.
type Refusal struct {
	Code    Code
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Result is what applying a command did.
type Result struct {
	// Refusal is set when the command changed nothing.
	Refusal *Refusal
	// Job is the job after the command (a lease: the leased job; none
	// granted leaves it zero).
	Job storage.TrainingJob
	// Granted says a lease command leased Job.
	Granted bool
	// Changes are the rows to store, each job row with its version.
	Changes Changes
}

// Changes are job rows and events a command produced.
type Changes struct {
	Jobs   []storage.TrainingJob
	Events []storage.TrainingEvent
}

// Add appends other's rows.
func (c *Changes) Add(other Changes) {
	c.Jobs = append(c.Jobs, other.Jobs...)
	c.Events = append(c.Events, other.Events...)
}
