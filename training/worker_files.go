package training

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/training/jobs"
	"github.com/weftdev/weft/training/protocol"
)

// MaxEventsPerBatch bounds the events of one append.
const MaxEventsPerBatch = 1000

// checkEvents accepts the reference's progress events: training_started
// with a whole num_sequences, and gradient_step whose values are all
// numbers (clients turn each into a float). Terminal events come from
// finishing the job.
func checkEvents(batch protocol.Events) ([]jobs.NewEvent, error) {
	if batch.Seq < 1 {
		return nil, schema("must be at least 1: number the lease's events from 1", "greater_than_equal", "seq")
	}
	if len(batch.Events) == 0 || len(batch.Events) > MaxEventsPerBatch {
		return nil, schema(fmt.Sprintf("send 1 to %d events", MaxEventsPerBatch), "too_long", "events")
	}
	out := make([]jobs.NewEvent, len(batch.Events))
	for i, e := range batch.Events {
		var data map[string]json.RawMessage
		if json.Unmarshal(e.Data, &data) != nil || data == nil {
			return nil, schema("must be an object", "dict_type", "events", i, "data")
		}
		switch e.Type {
		case jobs.EventStarted:
			var n int64
			if json.Unmarshal(data["num_sequences"], &n) != nil || n < 0 {
				return nil, schema("must be a whole number of gradient steps to come", "int_type", "events", i, "data", "num_sequences")
			}
		case jobs.EventGradientStep:
			for k, v := range data {
				var f float64
				if json.Unmarshal(v, &f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
					return nil, schema("must be a finite number: clients read every gradient_step value as a number", "float_type", "events", i, "data", k)
				}
			}
		default:
			return nil, schema("must be training_started or gradient_step; end the job with POST .../finish", "literal_error", "events", i, "type")
		}
		out[i] = jobs.NewEvent{Type: e.Type, Data: bytes.Clone(e.Data)}
	}
	return out, nil
}

// extend checks the worker's lease by extending it.
func (s *Service) extend(ctx context.Context, p auth.Principal, jobID, leaseID string) (storage.TrainingJob, error) {
	j, _, err := s.held(ctx, p, jobs.Command{Kind: jobs.KindHeartbeat, JobID: jobID, LeaseID: leaseID, TTL: s.d.Config.LeaseTTL})
	return j, err
}

// UploadFile stores a checkpoint file in the job's project under the
// worker's lease; content is read to its end (bounded by the caller).
func (s *Service) UploadFile(ctx context.Context, p auth.Principal, jobID, leaseID, name string, content io.Reader) (storage.FileInfo, error) {
	if err := checkFileName(name); err != nil {
		return storage.FileInfo{}, err
	}
	j, err := s.extend(ctx, p, jobID, leaseID)
	if err != nil {
		return storage.FileInfo{}, err
	}
	return s.d.Files.CreateFile(ctx, storage.FileCreateReq{ProjectID: j.ProjectID, Name: name, Content: content})
}

func checkFileName(name string) error {
	if name == "" || len(name) > 512 || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.HasPrefix(name, "..") {
		return invalid("name", "%q must be a relative file path without '..' (at most 512 characters)", name)
	}
	return nil
}

// OpenFile streams a file of the job's project under the worker's lease
// (a previous checkpoint's or an SFT dataset's).
func (s *Service) OpenFile(ctx context.Context, p auth.Principal, jobID, leaseID, digest string) (storage.FileInfo, io.ReadCloser, error) {
	j, err := s.extend(ctx, p, jobID, leaseID)
	if err != nil {
		return storage.FileInfo{}, nil, err
	}
	return s.d.Files.OpenFile(ctx, j.ProjectID, digest)
}

// RegisterCheckpoint stores the job's checkpoint under the worker's
// lease: a version of the model's artifact whose value lists the
// uploaded files, with the alias step<N> set through the automations'
// object store (so ADD_ARTIFACT_ALIAS fires), and the checkpoint row.
func (s *Service) RegisterCheckpoint(ctx context.Context, p auth.Principal, jobID, leaseID string, reg protocol.CheckpointRegistration) (*protocol.Checkpoint, error) {
	if err := checkMetrics(reg.Metrics); err != nil {
		return nil, err
	}
	j, _, err := s.held(ctx, p, jobs.Command{Kind: jobs.KindCheckpoint, JobID: jobID, LeaseID: leaseID, Step: reg.Step})
	if err != nil {
		return nil, err
	}
	m, err := s.d.Store.GetTrainingModel(ctx, auth.AllEntities, j.ModelID)
	if err != nil {
		return nil, err
	}
	files, err := s.checkFiles(ctx, j.ProjectID, reg.Files)
	if err != nil {
		return nil, err
	}
	c, err := s.storeCheckpoint(ctx, m, j, reg, files)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.held(ctx, p, jobs.Command{Kind: jobs.KindCheckpoint, JobID: jobID, LeaseID: leaseID, Step: reg.Step, Record: true}); err != nil {
		return nil, err
	}
	return s.describe(ctx, m, c)
}

func checkMetrics(m map[string]float64) error {
	for k, v := range m {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return schema("must be a finite number", "float_type", "metrics", k)
		}
	}
	return nil
}

// checkFiles finds every uploaded file of a checkpoint in the project.
func (s *Service) checkFiles(ctx context.Context, projectID string, files map[string]string) (map[string]protocol.File, error) {
	if len(files) == 0 || len(files) > 1000 {
		return nil, schema("list the checkpoint's uploaded files (1-1000) as {name: digest}", "too_short", "files")
	}
	out := map[string]protocol.File{}
	for name, digest := range files {
		if err := checkFileName(name); err != nil {
			return nil, err
		}
		info, rc, err := s.d.Files.OpenFile(ctx, projectID, digest)
		if err != nil {
			return nil, invalid("files."+name, "%s was not uploaded to this job's project (%v); PUT it first", digest, err)
		}
		_ = rc.Close()
		out[name] = protocol.File{Digest: info.Digest, Size: info.SizeBytes}
	}
	return out, nil
}

// storeCheckpoint writes the artifact version, its alias and the row.
func (s *Service) storeCheckpoint(ctx context.Context, m storage.TrainingModel, j storage.TrainingJob, reg protocol.CheckpointRegistration, files map[string]protocol.File) (storage.Checkpoint, error) {
	if reg.Metrics == nil {
		reg.Metrics = map[string]float64{}
	}
	val, _ := json.Marshal(checkpointValue{ArtifactType: "lora", ModelID: m.ID, BaseModel: m.BaseModel, Step: reg.Step,
		JobID: j.ID, Metrics: reg.Metrics, Files: files}) // finite numbers only: checked above
	created, err := s.d.Objects.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{ProjectID: m.ProjectID,
		ObjectID: m.Name, Val: val}})
	if err != nil {
		return storage.Checkpoint{}, err
	}
	if err := s.d.Objects.SetObjectAliases(ctx, storage.ObjAliasesReq{ProjectID: m.ProjectID, ObjectID: m.Name,
		Digest: created.Digest, Aliases: []string{fmt.Sprintf("step%d", reg.Step)}}); err != nil {
		return storage.Checkpoint{}, err
	}
	c := storage.Checkpoint{ModelID: m.ID, ID: uuid.NewString(), Step: reg.Step, Digest: created.Digest, JobID: j.ID,
		Metrics: reg.Metrics, CreatedAt: s.d.Now().UTC()}
	return c, s.d.Store.PutCheckpoint(ctx, c)
}
