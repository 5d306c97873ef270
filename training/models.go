package training

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
)

// ModelCreate is a create-model request.
type ModelCreate struct {
	Entity         string
	Project        string
	Name           string
	BaseModel      string
	ReturnExisting bool
}

// CreateModel creates a model, or with ReturnExisting returns the
// project's model of that name. The entity defaults to the key's.
func (s *Service) CreateModel(ctx context.Context, p auth.Principal, req ModelCreate) (storage.TrainingModel, error) {
	if req.Entity == "" {
		if p.Entity == auth.AllEntities {
			return storage.TrainingModel{}, invalid("entity", "this key belongs to no single entity; name the entity")
		}
		req.Entity = p.Entity
	}
	if err := s.checkModelCreate(req); err != nil {
		return storage.TrainingModel{}, err
	}
	projectID := req.Entity + "/" + req.Project
	if err := p.Authorize(projectID, auth.Write); err != nil {
		return storage.TrainingModel{}, err
	}
	m := storage.TrainingModel{ID: uuid.NewSHA1(modelSpace, []byte(projectID+"/"+req.Name)).String(), ProjectID: projectID,
		Name: req.Name, BaseModel: req.BaseModel, CreatedAt: s.d.Now().UTC()}
	stored, created, err := s.d.Store.CreateTrainingModel(ctx, m)
	if err != nil {
		return storage.TrainingModel{}, err
	}
	if !created && !req.ReturnExisting {
		return stored, fmt.Errorf("project %s already has a model named %q (id %s); pass return_existing: true to get it, or choose another name: %w",
			projectID, req.Name, stored.ID, storage.ErrConflict)
	}
	return stored, nil
}

func (s *Service) checkModelCreate(req ModelCreate) error {
	switch {
	case req.Project == "" || strings.Contains(req.Project, "/") || len(req.Project) > 128:
		return invalid("project", "%q must be a project name (1-128 characters, no '/')", req.Project)
	case strings.Contains(req.Entity, "/"):
		return invalid("entity", "%q must be an entity name without '/'", req.Entity)
	case len(s.d.Config.BaseModels) == 0:
		return invalid("base_model", "no base model can be trained here; list trainable models under training.base_models in the server's configuration")
	case !slices.Contains(s.d.Config.BaseModels, req.BaseModel):
		return invalid("base_model", "%q cannot be trained here; use one of %s", req.BaseModel, strings.Join(s.d.Config.BaseModels, ", "))
	}
	if err := storage.ValidateObjectID(req.Name); err != nil {
		return invalid("name", "%v (the name is the checkpoints' artifact name)", err)
	}
	return nil
}

// BaseModels lists the trainable base models.
func (s *Service) BaseModels(p auth.Principal) ([]string, error) {
	if p.Role == auth.RoleWorker {
		return nil, fmt.Errorf("%w: a worker key may only run training jobs", auth.ErrForbidden)
	}
	return append([]string{}, s.d.Config.BaseModels...), nil
}

// ModelDeleted is what deleting a model removed.
type ModelDeleted struct {
	ModelID            string
	DeletedCheckpoints int
}

// DeleteModel removes a model with its checkpoints (their artifact
// versions too) and log entries. A model with queued or running jobs is
// kept: cancel them first.
func (s *Service) DeleteModel(ctx context.Context, p auth.Principal, id string) (ModelDeleted, error) {
	m, err := s.model(ctx, p, id, auth.Write)
	if err != nil {
		return ModelDeleted{}, err
	}
	n, err := s.d.Store.CountOpenJobs(ctx, m.ID)
	if err != nil {
		return ModelDeleted{}, err
	}
	if n > 0 {
		return ModelDeleted{}, fmt.Errorf("model %s has %d queued or running training jobs; cancel them (POST /v1/preview/training-jobs/{id}/cancel) first: %w",
			m.ID, n, storage.ErrConflict)
	}
	gone, err := s.d.Store.DeleteTrainingModel(ctx, m)
	if err != nil {
		return ModelDeleted{}, err
	}
	if err := s.deleteVersions(ctx, m, gone); err != nil {
		return ModelDeleted{}, err
	}
	return ModelDeleted{ModelID: m.ID, DeletedCheckpoints: len(gone)}, nil
}

// deleteVersions removes the artifact versions of deleted checkpoints.
func (s *Service) deleteVersions(ctx context.Context, m storage.TrainingModel, gone []storage.Checkpoint) error {
	var digests []string
	for _, c := range gone {
		digests = append(digests, c.Digest)
	}
	for chunk := range slices.Chunk(digests, storage.MaxDeleteDigests) {
		_, err := s.d.Objects.DeleteObjects(ctx, storage.ObjDeleteReq{ProjectID: m.ProjectID, ObjectID: m.Name, Digests: chunk})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("deleting the checkpoints' artifact versions: %w", err)
		}
	}
	return nil
}
