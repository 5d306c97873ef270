package training

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/trajectory"
)

// CreateJob queues an RL job training the model on trajectory groups;
// experimental_config is kept for the worker as sent.
func (s *Service) CreateJob(ctx context.Context, p auth.Principal, modelID string, groups, experimental json.RawMessage) (string, error) {
	m, err := s.model(ctx, p, modelID, auth.Write)
	if err != nil {
		return "", err
	}
	stats, err := trajectory.Check(groups, "body", "trajectory_groups")
	if err != nil {
		return "", err
	}
	if stats.Groups == 0 {
		return "", schema("send at least one trajectory group to train on", "too_short", "trajectory_groups")
	}
	if err := optionalObject(experimental, "experimental_config"); err != nil {
		return "", err
	}
	return s.queueJob(ctx, m, storage.JobKindRL, members(member{"trajectory_groups", groups}, member{"experimental_config", experimental}))
}

// SFTJob is a create-SFT-job request.
type SFTJob struct {
	ModelID         string
	TrainingDataURL string
	Config          json.RawMessage
	Experimental    json.RawMessage
}

// CreateSFTJob queues a supervised fine-tuning job on the object version
// TrainingDataURL names (wandb-artifact:///<entity>/<project>/<name>:<version>),
// which the caller must be able to read.
func (s *Service) CreateSFTJob(ctx context.Context, p auth.Principal, req SFTJob) (string, error) {
	m, err := s.model(ctx, p, req.ModelID, auth.Write)
	if err != nil {
		return "", err
	}
	ref, err := ParseArtifactURI(req.TrainingDataURL)
	if err != nil {
		return "", invalid("training_data_url", "%v", err)
	}
	if err := p.Authorize(ref.ProjectID, auth.Read); err != nil {
		return "", err
	}
	data, err := s.d.Objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: ref.ProjectID, ObjectID: ref.Name, Digest: ref.Alias})
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidArgument) || errors.Is(err, storage.ErrFieldNotAllowed) {
		return "", invalid("training_data_url", "%s cannot be read (%v); publish the data first", req.TrainingDataURL, err)
	}
	if err != nil {
		return "", err
	}
	for field, raw := range map[string]json.RawMessage{"config": req.Config, "experimental_config": req.Experimental} {
		if err := optionalObject(raw, field); err != nil {
			return "", err
		}
	}
	resolved, _ := json.Marshal(map[string]any{"project_id": ref.ProjectID, "object_id": ref.Name, "digest": data.Obj.Digest,
		"version_index": data.Obj.VersionIndex, "val": data.Obj.Val}) // plain values
	url, _ := json.Marshal(req.TrainingDataURL)
	return s.queueJob(ctx, m, storage.JobKindSFT, members(member{"training_data_url", url},
		member{"training_data", resolved}, member{"config", req.Config}, member{"experimental_config", req.Experimental}))
}

// queueJob stores the job's input and queues it.
func (s *Service) queueJob(ctx context.Context, m storage.TrainingModel, kind string, input []byte) (string, error) {
	id := uuid.NewString()
	if err := s.d.Store.PutJobInput(ctx, storage.JobInput{JobID: id, ProjectID: m.ProjectID, Body: input}); err != nil {
		return "", err
	}
	latest, err := s.latestStep(ctx, m.ID)
	if err != nil {
		return "", err
	}
	r, err := s.d.Queue.Submit(ctx, jobs.Command{Kind: jobs.KindCreate, JobID: id, ProjectID: m.ProjectID, ModelID: m.ID,
		JobKind: kind, MaxAttempts: s.d.Config.MaxAttempts, LatestStep: latest})
	if err != nil {
		return "", err
	}
	if r.Refusal != nil {
		return "", refused(r.Refusal)
	}
	return id, nil
}

// member is one name and raw JSON value of an object members writes.
type member struct {
	name  string
	value []byte
}

// members writes a JSON object of raw values, null for absent ones.
func members(ms ...member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", m.name)
		if len(bytes.TrimSpace(m.value)) == 0 {
			m.value = []byte("null")
		}
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func optionalObject(raw json.RawMessage, field string) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) || t[0] == '{' {
		return nil
	}
	return schema("must be an object or null", "dict_type", field)
}

// GetJob returns a job of a project p may read.
func (s *Service) GetJob(ctx context.Context, p auth.Principal, id string) (storage.TrainingJob, error) {
	return s.job(ctx, p, id, auth.Read)
}

// Events returns a page of a job's events after the event with id after
// ("" from the first).
func (s *Service) Events(ctx context.Context, p auth.Principal, jobID, after string, limit int) ([]storage.TrainingEvent, bool, error) {
	j, err := s.job(ctx, p, jobID, auth.Read)
	if err != nil {
		return nil, false, err
	}
	var seq int64
	if after != "" {
		if seq, err = s.d.Store.TrainingEventSeq(ctx, j.ID, after); err != nil {
			return nil, false, err
		}
	}
	return s.d.Store.ListTrainingEvents(ctx, j.ID, seq, limit)
}

// CancelJob cancels a queued job at once; a running job's worker is told
// at its next heartbeat and the job ends cancelled when it stops (or
// when its lease ends).
func (s *Service) CancelJob(ctx context.Context, p auth.Principal, jobID string) (storage.TrainingJob, error) {
	j, err := s.job(ctx, p, jobID, auth.Write)
	if err != nil {
		return j, err
	}
	r, err := s.d.Queue.Submit(ctx, jobs.Command{Kind: jobs.KindCancel, JobID: j.ID})
	if err != nil {
		return j, err
	}
	if r.Refusal != nil {
		if r.Refusal.Code == jobs.NotOpen {
			return j, fmt.Errorf("training job %s has already ended (%s): %w", j.ID, j.Status, storage.ErrConflict)
		}
		return j, refused(r.Refusal)
	}
	return r.Job, nil
}

// ArtifactRef names an object version by URI.
type ArtifactRef struct {
	ProjectID, Name, Alias string
}

// ArtifactScheme starts a checkpoint's or a dataset's URI.
const ArtifactScheme = "wandb-artifact://"

// ParseArtifactURI reads wandb-artifact:///<entity>/<project>/<name>[:<alias>]
// (two slashes are accepted too); the alias defaults to latest.
func ParseArtifactURI(uri string) (ArtifactRef, error) {
	rest, ok := strings.CutPrefix(uri, ArtifactScheme)
	if !ok {
		return ArtifactRef{}, fmt.Errorf("%q must start with %s/ (wandb-artifact:///<entity>/<project>/<name>:<alias>)", uri, ArtifactScheme)
	}
	rest = strings.TrimPrefix(rest, "/")
	path, alias, _ := strings.Cut(rest, ":")
	parts := strings.Split(path, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return ArtifactRef{}, fmt.Errorf("%q must name <entity>/<project>/<name>", uri)
	}
	if alias == "" {
		alias = "latest"
	}
	return ArtifactRef{ProjectID: parts[0] + "/" + parts[1], Name: parts[2], Alias: alias}, nil
}
