package storage

import (
	"encoding/json"
	"time"
)

// Call is one Weave call as stored: the union of its start and end parts.
// JSON-valued fields hold raw JSON text; a nil RawMessage means "not set".
// Optional string fields use "" for null.
type Call struct {
	ProjectID   string
	ID          string
	TraceID     string
	ParentID    string
	ThreadID    string
	TurnID      string
	OpName      string
	DisplayName string

	StartedAt time.Time  // zero when only the end part is known
	EndedAt   *time.Time // nil while running

	Attributes json.RawMessage // object
	Inputs     json.RawMessage // object
	Output     json.RawMessage // any JSON value; nil = null
	Summary    json.RawMessage // object (as written; summary.weave is derived on read)
	OtelDump   json.RawMessage // raw OTel span when the call came from OTLP

	Exception    *string
	WBUserID     string
	WBRunID      string
	WBRunStep    *int64
	WBRunStepEnd *int64

	// InputRefs and OutputRefs are the weave:/// refs found anywhere in
	// inputs and output, extracted at write time for filters.
	InputRefs  []string
	OutputRefs []string

	DeletedAt *time.Time
}

// PartKind says which columns of a Call a CallPart carries. It is a bit set:
// merging a start with an end gives PartComplete.
type PartKind uint8

const (
	// PartStart carries the start-side columns: trace, parent, thread, turn,
	// op name, display name, started_at, attributes, inputs, otel dump,
	// user and run fields, input refs.
	PartStart PartKind = 1
	// PartEnd carries the end-side columns: ended_at, exception, output,
	// summary, wb_run_step_end, output refs.
	PartEnd PartKind = 2
	// PartComplete carries both sides at once (calls_complete, OTel spans).
	PartComplete = PartStart | PartEnd
)

// HasStart reports whether the part carries the start-side columns.
func (k PartKind) HasStart() bool { return k&PartStart != 0 }

// HasEnd reports whether the part carries the end-side columns.
func (k PartKind) HasEnd() bool { return k&PartEnd != 0 }

// String names the kind for logs and errors.
func (k PartKind) String() string {
	switch k {
	case PartStart:
		return "start"
	case PartEnd:
		return "end"
	case PartComplete:
		return "complete"
	}
	return "unknown"
}

// CallPart is one write of a call. Parts of the same (project, id) may
// arrive in any order and in different requests; storage merges them.
type CallPart struct {
	Kind PartKind
	Call Call
}

// CallUpdate changes the display name of a call. An empty DisplayName
// clears it. An update of a call with no stored part yet is kept, unseen,
// and applied when the start lands (clients batch starts and may rename
// at once); a start arriving after an update never overrides its name.
// A deleted call stays as it is.
type CallUpdate struct {
	ProjectID   string
	ID          string
	DisplayName string
	WBUserID    string
}

// CallDelete soft-deletes calls and all their descendants. An id with no
// stored part yet is remembered: its start is stored deleted when it
// lands.
type CallDelete struct {
	ProjectID string
	IDs       []string
	WBUserID  string
	At        time.Time
}
