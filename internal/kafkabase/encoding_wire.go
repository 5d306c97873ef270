package kafkabase

import (
	"encoding/json"
	"time"

	"github.com/weftdev/weft/storage"
)

// wireCall is storage.Call on the wire. The field names are part of the
// format (ADR 0006): they follow the Weave call schema and never change
// within a version, whatever the Go struct is renamed to.
type wireCall struct {
	ProjectID   string `json:"project_id"`
	ID          string `json:"id"`
	TraceID     string `json:"trace_id,omitempty"`
	ParentID    string `json:"parent_id,omitempty"`
	ThreadID    string `json:"thread_id,omitempty"`
	TurnID      string `json:"turn_id,omitempty"`
	OpName      string `json:"op_name,omitempty"`
	DisplayName string `json:"display_name,omitempty"`

	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`

	Attributes json.RawMessage `json:"attributes,omitempty"`
	Inputs     json.RawMessage `json:"inputs,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Summary    json.RawMessage `json:"summary,omitempty"`
	OtelDump   json.RawMessage `json:"otel_dump,omitempty"`

	Exception    *string `json:"exception,omitempty"`
	WBUserID     string  `json:"wb_user_id,omitempty"`
	WBRunID      string  `json:"wb_run_id,omitempty"`
	WBRunStep    *int64  `json:"wb_run_step,omitempty"`
	WBRunStepEnd *int64  `json:"wb_run_step_end,omitempty"`

	InputRefs  []string `json:"input_refs,omitempty"`
	OutputRefs []string `json:"output_refs,omitempty"`

	DeletedAt *time.Time `json:"deleted_at,omitempty"`
}

type wireUpdate struct {
	ProjectID   string `json:"project_id"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name,omitempty"`
	WBUserID    string `json:"wb_user_id,omitempty"`
}

type wireDelete struct {
	ProjectID string    `json:"project_id"`
	IDs       []string  `json:"ids"`
	WBUserID  string    `json:"wb_user_id,omitempty"`
	At        time.Time `json:"at"`
}

func fromCall(c *storage.Call) *wireCall {
	return &wireCall{
		ProjectID: c.ProjectID, ID: c.ID, TraceID: c.TraceID, ParentID: c.ParentID,
		ThreadID: c.ThreadID, TurnID: c.TurnID, OpName: c.OpName, DisplayName: c.DisplayName,
		StartedAt: utcPtr(c.StartedAt), EndedAt: utcOpt(c.EndedAt),
		Attributes: c.Attributes, Inputs: c.Inputs, Output: c.Output, Summary: c.Summary, OtelDump: c.OtelDump,
		Exception: c.Exception, WBUserID: c.WBUserID, WBRunID: c.WBRunID,
		WBRunStep: c.WBRunStep, WBRunStepEnd: c.WBRunStepEnd,
		InputRefs: c.InputRefs, OutputRefs: c.OutputRefs, DeletedAt: utcOpt(c.DeletedAt),
	}
}

func (w *wireCall) toStorage() storage.Call {
	c := storage.Call{
		ProjectID: w.ProjectID, ID: w.ID, TraceID: w.TraceID, ParentID: w.ParentID,
		ThreadID: w.ThreadID, TurnID: w.TurnID, OpName: w.OpName, DisplayName: w.DisplayName,
		EndedAt:    w.EndedAt,
		Attributes: w.Attributes, Inputs: w.Inputs, Output: w.Output, Summary: w.Summary, OtelDump: w.OtelDump,
		Exception: w.Exception, WBUserID: w.WBUserID, WBRunID: w.WBRunID,
		WBRunStep: w.WBRunStep, WBRunStepEnd: w.WBRunStepEnd,
		InputRefs: w.InputRefs, OutputRefs: w.OutputRefs, DeletedAt: w.DeletedAt,
	}
	if w.StartedAt != nil {
		c.StartedAt = *w.StartedAt
	}
	return c
}

func fromUpdate(u *storage.CallUpdate) *wireUpdate {
	return &wireUpdate{ProjectID: u.ProjectID, ID: u.ID, DisplayName: u.DisplayName, WBUserID: u.WBUserID}
}

func (w *wireUpdate) toStorage() *storage.CallUpdate {
	return &storage.CallUpdate{ProjectID: w.ProjectID, ID: w.ID, DisplayName: w.DisplayName, WBUserID: w.WBUserID}
}

func fromDelete(d *storage.CallDelete) *wireDelete {
	ids := d.IDs
	if ids == nil {
		ids = []string{}
	}
	return &wireDelete{ProjectID: d.ProjectID, IDs: ids, WBUserID: d.WBUserID, At: d.At.UTC()}
}

func (w *wireDelete) toStorage() *storage.CallDelete {
	return &storage.CallDelete{ProjectID: w.ProjectID, IDs: w.IDs, WBUserID: w.WBUserID, At: w.At}
}

// utcPtr maps the zero time (unknown) to an absent field.
func utcPtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func utcOpt(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
