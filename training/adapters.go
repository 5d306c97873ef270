package training

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
)

// Adapter is a checkpoint resolved for serving: the name the LoRA server
// knows it by and the base model it adapts.
type Adapter struct {
	Name      string
	BaseModel string
}

// ResolveAdapter resolves a chat request's model
// wandb-artifact:///<entity>/<project>/<name>[:<alias>] to the
// checkpoint it names. The alias is step<N>, latest (the default), v<N>
// or a version digest; the key must be able to read the project.
func (s *Service) ResolveAdapter(ctx context.Context, p auth.Principal, uri string) (Adapter, error) {
	ref, err := ParseArtifactURI(uri)
	if err != nil {
		return Adapter{}, invalid("model", "%v", err)
	}
	if err := p.Authorize(ref.ProjectID, auth.Read); err != nil {
		return Adapter{}, err
	}
	m, err := s.d.Store.FindTrainingModel(ctx, ref.ProjectID, ref.Name)
	if errors.Is(err, storage.ErrNotFound) {
		return Adapter{}, fmt.Errorf("%s names no trained model: %w", uri, storage.ErrNotFound)
	}
	if err != nil {
		return Adapter{}, err
	}
	res, err := s.d.Objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: m.ProjectID, ObjectID: m.Name, Digest: ref.Alias})
	if errors.Is(err, storage.ErrNotFound) {
		return Adapter{}, fmt.Errorf("%s names no checkpoint (%v): %w", uri, err, storage.ErrNotFound)
	}
	if err != nil {
		return Adapter{}, err
	}
	v, err := s.readCheckpointValue(ctx, m, res.Obj.Digest)
	if err != nil {
		return Adapter{}, err
	}
	if _, err := s.d.Store.GetCheckpoint(ctx, m.ID, v.Step); err != nil {
		return Adapter{}, fmt.Errorf("%s: the checkpoint of step %d was deleted: %w", uri, v.Step, storage.ErrNotFound)
	}
	return Adapter{Name: ArtifactName(m, v.Step), BaseModel: m.BaseModel}, nil
}

// Check is one system check's outcome.
type Check struct {
	Success  bool
	Duration time.Duration
	Err      error
}

// SystemCheck checks the database and the job queue.
func (s *Service) SystemCheck(ctx context.Context) map[string]Check {
	run := func(f func(context.Context) error) Check {
		start := s.d.Now()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := f(cctx)
		return Check{Success: err == nil, Duration: s.d.Now().Sub(start), Err: err}
	}
	return map[string]Check{
		"api":       {Success: true},
		"database":  run(s.d.Store.PingTraining),
		"job_queue": run(s.d.Queue.Check),
	}
}
