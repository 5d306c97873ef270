package storage

import (
	"context"
	"encoding/json"
	"time"
)

// Training job states. Queued and running jobs are open; the other three
// are final.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// Training job kinds.
const (
	JobKindRL  = "rl"
	JobKindSFT = "sft"
)

// TrainingModel is a trainable model of a project: a name unique in its
// project and the base model it trains from.
type TrainingModel struct {
	ID        string
	ProjectID string
	Name      string
	BaseModel string
	CreatedAt time.Time
}

// Checkpoint is one trained step of a model. Digest names the object
// version that holds its files (the artifact version); Metrics are what
// the worker reported when it registered the checkpoint.
type Checkpoint struct {
	ModelID   string
	ID        string
	Step      int64
	Digest    string
	JobID     string
	Metrics   map[string]float64
	CreatedAt time.Time
}

// CheckpointPage asks for a page of a model's checkpoints by step: those
// after the checkpoint AfterID (none: from the first), in ascending or
// descending order, at most Limit.
type CheckpointPage struct {
	ModelID    string
	AfterID    string
	Descending bool
	Limit      int
}

// MaxTrainingModels bounds how many models one listing of a project's
// models returns.
const MaxTrainingModels = 1000

// TrainingJobPage asks for a page of a project's jobs, newest first (by
// creation, then id): those after the job AfterID in that order (none:
// from the newest), only of ModelID when set, at most Limit.
type TrainingJobPage struct {
	ProjectID string
	ModelID   string
	AfterID   string
	Limit     int
}

// TrainingLogEntry is one /log call: the trajectory groups as sent and
// the sums the split's metrics are computed from, at the model's step
// when it was logged.
type TrainingLogEntry struct {
	ModelID   string
	ID        string
	Step      int64
	Split     string
	Groups    json.RawMessage
	Stats     LogStats
	CreatedAt time.Time
}

// LogStats are the sums of one log entry: trajectories and groups
// counted, rewards summed, and each numeric trajectory metric summed
// with the number of trajectories that had it.
type LogStats struct {
	Groups       int64
	Trajectories int64
	RewardSum    float64
	MetricSums   map[string]float64
	MetricCounts map[string]int64
}

// TrainingJob is a training job's state. The job queue (package
// training/jobs) owns it: storage keeps each job's row as the queue last
// wrote it, and a write carrying a Version not above the stored one
// changes nothing, so replayed or late writes cannot undo newer ones.
type TrainingJob struct {
	ID          string
	ProjectID   string
	ModelID     string
	Kind        string
	Status      string
	Attempts    int
	MaxAttempts int
	// TargetStep is the step of the checkpoint the job produces.
	TargetStep int64
	// CheckpointStep is the highest step the job registered (0: none).
	CheckpointStep int64
	// LeaseID and Worker hold the current (running) or the last lease.
	LeaseID    string
	Worker     string
	LeaseUntil *time.Time
	// LeaseAck is the last worker-side event number the lease applied.
	LeaseAck int64
	// LastSeq is the sequence number of the job's last event.
	LastSeq         int64
	CancelRequested bool
	ErrorMessage    string
	CreatedAt       time.Time
	QueuedAt        time.Time
	TrainingStart   *time.Time
	TrainingEnd     *time.Time
	Version         int64
}

// Open reports whether the job is queued or running.
func (j TrainingJob) Open() bool { return j.Status == JobQueued || j.Status == JobRunning }

// TrainingEvent is one event of a job. Seq orders a job's events and
// never changes; ID is stable too.
type TrainingEvent struct {
	JobID     string
	Seq       int64
	ID        string
	Type      string
	Data      json.RawMessage
	CreatedAt time.Time
}

// JobInput is what a job was created with (the request body), kept for
// the worker that leases it.
type JobInput struct {
	JobID     string
	ProjectID string
	Body      json.RawMessage
}

// QueueSnapshot is the job queue's state after the command at Position
// of its log, as the queue encodes it.
type QueueSnapshot struct {
	Position  int64
	State     []byte
	CreatedAt time.Time
}

// TrainingModelStore keeps models, their checkpoints and their log
// entries. Reads by id are scoped to an entity (auth.AllEntities, "*",
// reads any).
type TrainingModelStore interface {
	// CreateTrainingModel stores m unless its project has a model of
	// that name; either way it returns the stored model and whether it
	// was created now.
	CreateTrainingModel(ctx context.Context, m TrainingModel) (TrainingModel, bool, error)
	// GetTrainingModel returns the model with id in one of entity's
	// projects; ErrNotFound.
	GetTrainingModel(ctx context.Context, entity, id string) (TrainingModel, error)
	// FindTrainingModel returns the project's model of that name.
	FindTrainingModel(ctx context.Context, projectID, name string) (TrainingModel, error)
	// ListTrainingModels returns the project's models by name, at most
	// MaxTrainingModels.
	ListTrainingModels(ctx context.Context, projectID string) ([]TrainingModel, error)
	// DeleteTrainingModel removes the model, its checkpoints and its log
	// entries, and returns the checkpoints it removed.
	DeleteTrainingModel(ctx context.Context, m TrainingModel) ([]Checkpoint, error)
	// PutCheckpoint stores c, replacing the model's checkpoint of the
	// same step.
	PutCheckpoint(ctx context.Context, c Checkpoint) error
	// ListCheckpoints returns a page of checkpoints and whether more
	// follow. An AfterID that names no checkpoint of the model is
	// ErrInvalidArgument.
	ListCheckpoints(ctx context.Context, p CheckpointPage) ([]Checkpoint, bool, error)
	// GetCheckpoint returns the model's checkpoint of step; ErrNotFound.
	GetCheckpoint(ctx context.Context, modelID string, step int64) (Checkpoint, error)
	// DeleteCheckpoints removes the checkpoints of steps and returns the
	// ones it removed.
	DeleteCheckpoints(ctx context.Context, modelID string, steps []int64) ([]Checkpoint, error)
	// AddLogEntry stores one /log call.
	AddLogEntry(ctx context.Context, e TrainingLogEntry) error
	// LogStats returns the summed stats of the model's log entries by
	// step and split, for the steps given.
	LogStats(ctx context.Context, modelID string, steps []int64) (map[int64]map[string]LogStats, error)
}

// TrainingJobStore keeps jobs, their inputs, their events and the job
// queue's snapshots.
type TrainingJobStore interface {
	// PutJobInput stores a job's input before the job is queued.
	PutJobInput(ctx context.Context, in JobInput) error
	// GetJobInput returns the input of a job of projectID.
	GetJobInput(ctx context.Context, projectID, jobID string) (JobInput, error)
	// SaveTrainingJobs writes each job unless the stored row has the
	// same or a higher Version; and events, of which a (JobID, Seq)
	// already stored is left as it is. Backends with transactions write
	// both at once.
	SaveTrainingJobs(ctx context.Context, jobs []TrainingJob, events []TrainingEvent) error
	// GetTrainingJob returns the job with id in one of entity's projects.
	GetTrainingJob(ctx context.Context, entity, id string) (TrainingJob, error)
	// OpenTrainingJobs returns every queued and running job, and the
	// highest Version of any job row.
	OpenTrainingJobs(ctx context.Context) ([]TrainingJob, int64, error)
	// ListTrainingJobs returns a page of a project's jobs and whether
	// more follow. An AfterID that names no job of the project is
	// ErrInvalidArgument.
	ListTrainingJobs(ctx context.Context, p TrainingJobPage) ([]TrainingJob, bool, error)
	// CountOpenJobs counts the model's queued and running jobs.
	CountOpenJobs(ctx context.Context, modelID string) (int64, error)
	// ListTrainingEvents returns up to limit events of the job with Seq
	// above afterSeq, in Seq order, and whether more follow.
	ListTrainingEvents(ctx context.Context, jobID string, afterSeq int64, limit int) ([]TrainingEvent, bool, error)
	// TrainingEventSeq returns the Seq of the job's event with id.
	TrainingEventSeq(ctx context.Context, jobID, eventID string) (int64, error)
	// SaveQueueSnapshot stores a snapshot; LatestQueueSnapshot returns
	// the one with the highest Position (ErrNotFound when none).
	SaveQueueSnapshot(ctx context.Context, s QueueSnapshot) error
	LatestQueueSnapshot(ctx context.Context) (QueueSnapshot, error)
	// PingTraining runs the cheapest query on the training tables.
	PingTraining(ctx context.Context) error
}

// TrainingBackend is everything the training service keeps in storage.
type TrainingBackend interface {
	TrainingModelStore
	TrainingJobStore
}
