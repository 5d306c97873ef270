package training

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
)

// ProjectOf is the project id entity/project names for p: the entity
// defaults to the key's.
func ProjectOf(p auth.Principal, entity, project string) (string, error) {
	if entity == "" {
		if p.Entity == auth.AllEntities {
			return "", invalid("entity", "this key belongs to no single entity; name the entity")
		}
		entity = p.Entity
	}
	switch {
	case project == "" || strings.Contains(project, "/"):
		return "", invalid("project", "%q must be a project name (no '/')", project)
	case strings.Contains(entity, "/"):
		return "", invalid("entity", "%q must be an entity name without '/'", entity)
	}
	return entity + "/" + project, nil
}

// GetModel returns a model the key may read.
func (s *Service) GetModel(ctx context.Context, p auth.Principal, id string) (storage.TrainingModel, error) {
	return s.model(ctx, p, id, auth.Read)
}

// ListModels returns the models of a project the key may read, by name.
func (s *Service) ListModels(ctx context.Context, p auth.Principal, projectID string) ([]storage.TrainingModel, error) {
	if err := p.Authorize(projectID, auth.Read); err != nil {
		return nil, err
	}
	return s.d.Store.ListTrainingModels(ctx, projectID)
}

// ListJobs returns a page of the jobs of a project the key may read,
// newest first, and whether more follow.
func (s *Service) ListJobs(ctx context.Context, p auth.Principal, pg storage.TrainingJobPage) ([]storage.TrainingJob, bool, error) {
	if err := p.Authorize(pg.ProjectID, auth.Read); err != nil {
		return nil, false, err
	}
	if _, err := uuid.Parse(pg.ModelID); pg.ModelID != "" && err != nil {
		return nil, false, invalid("model_id", "%q is not a UUID; pass the id POST /v1/preview/models answered", pg.ModelID)
	}
	if _, err := uuid.Parse(pg.AfterID); pg.AfterID != "" && err != nil {
		return nil, false, invalid("after", "%q is not a UUID; pass the last id of the previous page", pg.AfterID)
	}
	return s.d.Store.ListTrainingJobs(ctx, pg)
}
