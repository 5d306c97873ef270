// Package protocol holds the wire shapes of the training worker
// protocol: what weft answers a worker that leases a job, what a worker
// sends while it works, and what `weft trainer` hands the user's command
// and reads back from it. The server's worker API and the trainer both
// use these types, so the two cannot drift apart; docs/training.md and
// docs/adr/0014-training-job-queue.md describe them for other clients.
//
// It must never import anything but the standard library.
package protocol

import (
	"encoding/json"
	"time"
)

// LeaseHeader carries a lease's id on every call a worker makes about
// its job.
const LeaseHeader = "Weft-Lease"

// LeaseRequest is the body of POST /v1/worker/lease.
type LeaseRequest struct {
	// Worker names the worker in the job's state (a host name, a GPU).
	Worker string `json:"worker"`
	// WaitSeconds is how long to wait for a job when none is queued,
	// from 0 (do not wait) through MaxWaitSeconds; other values are
	// refused with 400. The server caps it at training.max_lease_wait.
	WaitSeconds float64 `json:"wait_seconds"`
}

// MaxWaitSeconds is the largest LeaseRequest.WaitSeconds: 10 minutes,
// the largest training.max_lease_wait.
const MaxWaitSeconds = 600

// Lease is the answer to a lease that got a job (HTTP 200; 204 means
// none came within the wait).
type Lease struct {
	LeaseID string `json:"lease_id"`
	// LeaseUntil is when the lease ends unless a heartbeat extends it;
	// HeartbeatSeconds is how often to send one.
	LeaseUntil       time.Time `json:"lease_until"`
	LeaseSeconds     float64   `json:"lease_seconds"`
	HeartbeatSeconds float64   `json:"heartbeat_seconds"`
	Job              Job       `json:"job"`
	Model            Model     `json:"model"`
	// PreviousCheckpoint is the model's latest checkpoint below the one
	// the job produces; nil for the first.
	PreviousCheckpoint *Checkpoint `json:"previous_checkpoint"`
	// Input is the job's request as created: for RL jobs
	// trajectory_groups and experimental_config; for SFT jobs
	// training_data_url, training_data (the resolved object version),
	// config and experimental_config.
	Input json.RawMessage `json:"input"`
}

// Job is the leased job.
type Job struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // rl or sft
	Attempt int    `json:"attempt"`
	// TargetStep is the step of the checkpoint the job must register
	// before it finishes with succeeded.
	TargetStep int64     `json:"target_step"`
	CreatedAt  time.Time `json:"created_at"`
}

// Model is the job's model.
type Model struct {
	ID        string `json:"id"`
	Entity    string `json:"entity"`
	Project   string `json:"project"`
	Name      string `json:"name"`
	BaseModel string `json:"base_model"`
}

// Checkpoint is a stored checkpoint as a worker sees it.
type Checkpoint struct {
	ID string `json:"id"`
	// Step and Artifact (entity/project/name:step<N>) name it.
	Step     int64              `json:"step"`
	Artifact string             `json:"artifact"`
	Metrics  map[string]float64 `json:"metrics"`
	// Files maps file names to their stored content, fetched with GET
	// /v1/worker/jobs/{id}/files/{digest}.
	Files map[string]File `json:"files"`
}

// File is one stored file of a checkpoint.
type File struct {
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// HeartbeatAnswer is the answer to POST /v1/worker/jobs/{id}/heartbeat.
type HeartbeatAnswer struct {
	LeaseUntil time.Time `json:"lease_until"`
	// CancelRequested tells the worker to stop and finish with cancelled.
	CancelRequested bool `json:"cancel_requested"`
}

// Events is the body of POST /v1/worker/jobs/{id}/events. Events are
// numbered by the worker from 1 within its lease: Seq is the number of
// the first, so a batch sent again after a lost answer is applied once.
type Events struct {
	Seq    int64   `json:"seq"`
	Events []Event `json:"events"`
}

// Event is one progress event: training_started with
// {"num_sequences": N}, or gradient_step with numeric values only.
type Event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// CheckpointRegistration is the body of POST
// /v1/worker/jobs/{id}/checkpoints: the files were uploaded first with
// PUT /v1/worker/jobs/{id}/files/{name}.
type CheckpointRegistration struct {
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
	Files   map[string]string  `json:"files"` // name -> digest
}

// Finish is the body of POST /v1/worker/jobs/{id}/finish.
type Finish struct {
	Status       string `json:"status"` // succeeded, failed or cancelled
	ErrorMessage string `json:"error_message,omitempty"`
}

// Uploaded is the answer to a file upload.
type Uploaded struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}
