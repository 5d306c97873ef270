package training

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
)

// ServedName is the name the LoRA upstreams serve a checkpoint version
// under, read from the version's value wherever it was linked (a
// registry keeps the checkpoint's value). ok is false for a value that
// is no checkpoint; a checkpoint whose model was deleted is
// storage.ErrNotFound.
func (s *Service) ServedName(ctx context.Context, projectID string, val json.RawMessage) (name string, ok bool, err error) {
	var v checkpointValue
	if json.Unmarshal(val, &v) != nil || v.ArtifactType != "lora" || v.ModelID == "" {
		return "", false, nil
	}
	entity, _, _ := strings.Cut(projectID, "/")
	m, err := s.d.Store.GetTrainingModel(ctx, entity, v.ModelID)
	if err != nil {
		return "", true, fmt.Errorf("the checkpoint's model %s: %w", v.ModelID, err)
	}
	if _, err := s.d.Store.GetCheckpoint(ctx, m.ID, v.Step); err != nil {
		return "", true, fmt.Errorf("the checkpoint of step %d was deleted: %w", v.Step, storage.ErrNotFound)
	}
	return ArtifactName(m, v.Step), true, nil
}
