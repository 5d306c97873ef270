package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// CallSchema is the read shape of a call.
type CallSchema struct {
	ID                    string          `json:"id"`
	ProjectID             string          `json:"project_id"`
	OpName                string          `json:"op_name"`
	DisplayName           *string         `json:"display_name"`
	TraceID               string          `json:"trace_id"`
	ParentID              *string         `json:"parent_id"`
	ThreadID              *string         `json:"thread_id"`
	TurnID                *string         `json:"turn_id"`
	StartedAt             Time            `json:"started_at"`
	EndedAt               *Time           `json:"ended_at"`
	Attributes            json.RawMessage `json:"attributes"`
	Inputs                json.RawMessage `json:"inputs"`
	Output                json.RawMessage `json:"output"`
	Exception             *string         `json:"exception"`
	Summary               json.RawMessage `json:"summary"`
	WBUserID              *string         `json:"wb_user_id"`
	WBRunID               *string         `json:"wb_run_id"`
	WBRunStep             *int64          `json:"wb_run_step"`
	WBRunStepEnd          *int64          `json:"wb_run_step_end"`
	DeletedAt             *Time           `json:"deleted_at"`
	ExpireAt              *Time           `json:"expire_at"`
	WBUsername            *string         `json:"wb_username,omitempty"`
	StorageSizeBytes      *int64          `json:"storage_size_bytes,omitempty"`
	TotalStorageSizeBytes *int64          `json:"total_storage_size_bytes,omitempty"`
}

// Extras are values computed on read: merged into summary.weave, or
// fields of their own.
type Extras struct {
	Costs    json.RawMessage // summary.weave.costs, nil when not requested
	Feedback json.RawMessage // summary.weave.feedback, nil when not requested
	Username string          // wb_username, "" when not requested or unknown
	ExpireAt *time.Time      // expire_at, nil when the project keeps calls
}

// NewCallSchema renders a stored call with the derived summary.weave fields
// (status, latency_ms, trace_name or display_name, and any extras).
func NewCallSchema(c storage.StoredCall, x Extras) CallSchema {
	s := CallSchema{
		ID: c.ID, ProjectID: c.ProjectID, OpName: c.OpName, TraceID: c.TraceID,
		DisplayName: optional(c.DisplayName), ParentID: optional(c.ParentID),
		ThreadID: optional(c.ThreadID), TurnID: optional(c.TurnID),
		StartedAt: Time{c.StartedAt}, Attributes: attributesWithSpan(c.Attributes, c.OtelDump),
		Inputs: orEmpty(c.Inputs), Output: orNull(c.Output), Exception: c.Exception,
		WBUserID: optional(c.WBUserID), WBRunID: optional(c.WBRunID),
		WBRunStep: c.WBRunStep, WBRunStepEnd: c.WBRunStepEnd,
		StorageSizeBytes: c.StorageSizeBytes, TotalStorageSizeBytes: c.TotalStorageSizeBytes,
	}
	if c.EndedAt != nil {
		s.EndedAt = &Time{*c.EndedAt}
	}
	if c.DeletedAt != nil {
		s.DeletedAt = &Time{*c.DeletedAt}
	}
	if x.ExpireAt != nil {
		s.ExpireAt = &Time{*x.ExpireAt}
	}
	s.WBUsername = optional(x.Username)
	s.Summary = derivedSummary(c.Call, x)
	return s
}

// Status derives summary.weave.status.
func Status(c storage.Call, summary map[string]json.RawMessage) string {
	switch {
	case c.Exception != nil:
		return "error"
	case c.EndedAt == nil:
		return "running"
	case statusErrors(summary) > 0:
		return "descendant_error"
	}
	return "success"
}

func statusErrors(summary map[string]json.RawMessage) float64 {
	var counts map[string]float64
	if raw, ok := summary["status_counts"]; ok {
		_ = json.Unmarshal(raw, &counts)
	}
	return counts["error"]
}

// TraceName is the op name taken from an op ref, or the raw op name.
func TraceName(opName string) string {
	if i := strings.Index(opName, "/op/"); i >= 0 && strings.HasPrefix(opName, "weave:") {
		name := opName[i+len("/op/"):]
		if j := strings.IndexByte(name, ':'); j >= 0 {
			name = name[:j]
		}
		return name
	}
	return opName
}

func derivedSummary(c storage.Call, x Extras) json.RawMessage {
	summary := map[string]json.RawMessage{}
	if len(c.Summary) > 0 {
		_ = json.Unmarshal(c.Summary, &summary)
	}
	weave := map[string]any{"status": Status(c, summary)}
	if c.EndedAt != nil && !c.StartedAt.IsZero() {
		weave["latency_ms"] = c.EndedAt.Sub(c.StartedAt).Milliseconds()
	}
	if c.DisplayName != "" {
		weave["display_name"] = c.DisplayName
	} else {
		weave["trace_name"] = TraceName(c.OpName)
	}
	if x.Costs != nil {
		weave["costs"] = x.Costs
	}
	if x.Feedback != nil {
		weave["feedback"] = x.Feedback
	}
	w, _ := json.Marshal(weave)
	summary["weave"] = w
	out, _ := json.Marshal(summary)
	return out
}

// attributesWithSpan returns attributes with the raw OTel span merged in
// as attributes.otel_span, as the reference server reads it back.
func attributesWithSpan(attrs, dump json.RawMessage) json.RawMessage {
	attrs = orEmpty(attrs)
	if len(dump) == 0 {
		return attrs
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(attrs, &m); err != nil {
		return attrs
	}
	m["otel_span"] = dump
	out, err := json.Marshal(m)
	if err != nil {
		return attrs
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmpty(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("{}")
	}
	return v
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("null")
	}
	return v
}
