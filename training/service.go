// Package training is the training control plane behind OpenPipe ART's
// serverless API: models, their checkpoints (kept as versions of an
// artifact, so automations fire on their aliases), /log metrics, RL and
// SFT jobs, and the worker side that leases jobs and reports on them.
// Jobs change only through the job queue (package training/queue), which
// decides leases; this package checks requests, authorises them and
// turns them into queue commands and stored rows.
//
// It must never import HTTP code or storage backends: training/api
// serves it.
package training

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/queue"
	"github.com/weftdev/weft/training/trajectory"
)

// Deps are what the service is built from.
type Deps struct {
	Config Config
	Store  storage.TrainingBackend
	// Objects keeps checkpoints as artifact versions; pass the store
	// wrapped by automations.Objects so alias writes record events.
	Objects storage.ObjectStore
	Files   storage.FileStore
	Queue   queue.Sequencer
	Now     func() time.Time
}

// Service is the training control plane.
type Service struct {
	d        Deps
	stopping chan struct{}
	stopOnce sync.Once
}

// New builds the service.
func New(d Deps) *Service { return &Service{d: d, stopping: make(chan struct{})} }

// StopWaiting ends every lease request waiting for a job (with no job),
// now and from now on: the server is shutting down.
func (s *Service) StopWaiting() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Config is the service's configuration.
func (s *Service) Config() Config { return s.d.Config }

// modelSpace namespaces model ids: a model's id derives from its project
// and name, so concurrent creates of one model agree on its id.
var modelSpace = uuid.MustParse("5f1e0c9a-7b2d-5e3f-8a41-2c6d9e0b7f13")

// invalid is a 400 naming the field and the fix.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, args...), storage.ErrInvalidArgument)
}

// schema is a 422 at the body path loc, as FastAPI answers.
func schema(msg, typ string, loc ...any) error {
	return &trajectory.Error{Loc: append([]any{"body"}, loc...), Msg: msg, Type: typ}
}

// refused turns a queue refusal into an error of the right kind: a
// contradiction of the job's state (409) or a bad value (400).
func refused(r *jobs.Refusal) error {
	if r.Code == jobs.Invalid {
		return fmt.Errorf("%s: %w", r.Message, storage.ErrInvalidArgument)
	}
	return fmt.Errorf("%s: %w", r.Message, storage.ErrConflict)
}

// hidden turns "not yours" into "not found": a key must not learn that
// another tenant's model or job exists.
func hidden(err error, what, id string) error {
	if errors.Is(err, auth.ErrForbidden) || errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%s %q does not exist: %w", what, id, storage.ErrNotFound)
	}
	return err
}

// scope is the entity an id lookup is confined to.
func scope(p auth.Principal) string { return p.Entity }

// model returns the model id names if p may use it with need.
func (s *Service) model(ctx context.Context, p auth.Principal, id string, need auth.Access) (storage.TrainingModel, error) {
	if _, err := uuid.Parse(id); err != nil {
		return storage.TrainingModel{}, invalid("model_id", "%q is not a UUID; pass the id POST /v1/preview/models answered", id)
	}
	m, err := s.d.Store.GetTrainingModel(ctx, scope(p), id)
	if err == nil {
		err = p.Authorize(m.ProjectID, auth.Read)
	}
	if err != nil {
		return m, hidden(err, "model", id)
	}
	return m, p.Authorize(m.ProjectID, need)
}

// job returns the job id names if p may use it with need.
func (s *Service) job(ctx context.Context, p auth.Principal, id string, need auth.Access) (storage.TrainingJob, error) {
	if _, err := uuid.Parse(id); err != nil {
		return storage.TrainingJob{}, invalid("training_job_id", "%q is not a UUID; pass the id the job's creation answered", id)
	}
	j, err := s.d.Store.GetTrainingJob(ctx, scope(p), id)
	if err == nil && need != auth.Work {
		err = p.Authorize(j.ProjectID, auth.Read)
	}
	if err != nil {
		return j, hidden(err, "training job", id)
	}
	return j, p.Authorize(j.ProjectID, need)
}

// SplitProject is a project id's entity and project.
func SplitProject(projectID string) (entity, project string) {
	entity, project, _ = strings.Cut(projectID, "/")
	return entity, project
}
