package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/jsontext"
	"github.com/weftdev/weft/storage"
)

// StartedCall is StartedCallSchemaForInsert.
type StartedCall struct {
	ProjectID   string          `json:"project_id"`
	ID          string          `json:"id"`
	OpName      string          `json:"op_name"`
	DisplayName *string         `json:"display_name"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id"`
	ThreadID    *string         `json:"thread_id"`
	TurnID      *string         `json:"turn_id"`
	StartedAt   Time            `json:"started_at"`
	Attributes  json.RawMessage `json:"attributes"`
	Inputs      json.RawMessage `json:"inputs"`
	OtelDump    json.RawMessage `json:"otel_dump"`
	WBUserID    *string         `json:"wb_user_id"`
	WBRunID     *string         `json:"wb_run_id"`
	WBRunStep   *int64          `json:"wb_run_step"`
}

// EndedCall is EndedCallSchemaForInsert.
type EndedCall struct {
	ProjectID    string          `json:"project_id"`
	ID           string          `json:"id"`
	EndedAt      Time            `json:"ended_at"`
	Exception    *string         `json:"exception"`
	Output       json.RawMessage `json:"output"`
	Summary      json.RawMessage `json:"summary"`
	WBRunStepEnd *int64          `json:"wb_run_step_end"`
	// DisplayName is set by the TypeScript SDK when the call was renamed
	// while it ran; it is applied as a rename (Rename).
	DisplayName *string `json:"display_name"`
}

// CompletedCall is CompletedCallSchemaForInsert: a start and an end at once.
type CompletedCall struct {
	StartedCall
	EndedAt      Time            `json:"ended_at"`
	Exception    *string         `json:"exception"`
	Output       json.RawMessage `json:"output"`
	Summary      json.RawMessage `json:"summary"`
	WBRunStepEnd *int64          `json:"wb_run_step_end"`
}

// RefExtractor finds the weave refs inside a JSON value.
type RefExtractor func(json.RawMessage) []string

// maxOpNameLen is the reference server's limit for op names that are not refs.
const maxOpNameLen = 128

// MaxIDLen bounds call, trace and parent ids: the SDKs send UUIDv7s (36
// characters), OTLP 16 or 32 hex digits.
const MaxIDLen = 128

// MaxValueDepth is how deeply call inputs, outputs, attributes and
// summaries may nest, the same as object values.
const MaxValueDepth = jsontext.MaxValueDepth

// CheckID refuses an id that is longer than MaxIDLen bytes or has
// whitespace, control characters or '/' (refs split on it), as a 400
// naming field. An empty id passes: callers say when one is required.
func CheckID(field, id string) error {
	if len(id) > MaxIDLen {
		return &FieldError{Field: field, Msg: fmt.Sprintf("%d bytes long; ids are at most %d bytes, e.g. a UUID or 16 or 32 hex digits", len(id), MaxIDLen)}
	}
	if i := strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(id[i:])
		return &FieldError{Field: field, Msg: fmt.Sprintf("has %q at byte %d; ids have no spaces, control characters or '/', e.g. a UUID or hex digits", r, i)}
	}
	return nil
}

// checkDepth refuses a value nested deeper than MaxValueDepth, as a 400
// naming field.
func checkDepth(field string, v json.RawMessage) error {
	if jsontext.TooDeep(v, MaxValueDepth) {
		return &FieldError{Field: field, Msg: fmt.Sprintf("nests objects and arrays deeper than %d levels; flatten it", MaxValueDepth)}
	}
	return nil
}

// StartPart validates s and converts it. Missing id and trace_id are
// generated (UUIDv7), as the reference ClickHouse server does. userID is
// the authenticated caller and overrides any wb_user_id sent.
func (s *StartedCall) StartPart(userID string, extract RefExtractor) (storage.CallPart, error) {
	if err := s.validate(); err != nil {
		return storage.CallPart{}, err
	}
	if s.ID == "" {
		s.ID = newID()
	}
	if s.TraceID == "" {
		s.TraceID = newID()
	}
	inputs := objectOrEmpty(s.Inputs)
	c := storage.Call{
		ProjectID: s.ProjectID, ID: s.ID, TraceID: s.TraceID, OpName: s.OpName,
		DisplayName: deref(s.DisplayName), ParentID: deref(s.ParentID),
		ThreadID: deref(s.ThreadID), TurnID: deref(s.TurnID), StartedAt: s.StartedAt.UTC(),
		Attributes: objectOrEmpty(s.Attributes), Inputs: inputs, OtelDump: nullToNil(s.OtelDump),
		WBUserID: userID, WBRunID: deref(s.WBRunID), WBRunStep: s.WBRunStep,
		InputRefs: extract(inputs),
	}
	return storage.CallPart{Kind: storage.PartStart, Call: c}, nil
}

func (s *StartedCall) validate() error {
	switch {
	case s.ProjectID == "":
		return Missing("project_id", "")
	case s.OpName == "":
		return Missing("op_name", ": the op name or op ref")
	case !strings.HasPrefix(s.OpName, "weave:") && len(s.OpName) > maxOpNameLen:
		return &FieldError{Field: "op_name", Msg: fmt.Sprintf("longer than %d characters; use a shorter name or an op ref", maxOpNameLen)}
	case s.StartedAt.IsZero():
		return Missing("started_at", ": an ISO-8601 datetime")
	case s.DisplayName != nil && len(*s.DisplayName) > 1024:
		return &FieldError{Field: "display_name", Msg: "longer than 1024 characters"}
	}
	for _, f := range []struct{ name, id string }{{"id", s.ID}, {"trace_id", s.TraceID}, {"parent_id", deref(s.ParentID)}} {
		if err := CheckID(f.name, f.id); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"attributes", s.Attributes}, {"inputs", s.Inputs}, {"otel_dump", s.OtelDump}} {
		if err := MustBeObject(f.name, f.v); err != nil {
			return err
		}
		if err := checkDepth(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// checkEnd applies the rules every end shares: output and summary nest
// at most MaxValueDepth levels, and summary is an object.
func checkEnd(output, summary json.RawMessage) error {
	if err := MustBeObject("summary", summary); err != nil {
		return err
	}
	if err := checkDepth("output", output); err != nil {
		return err
	}
	return checkDepth("summary", summary)
}

// EndPart validates e and converts it.
func (e *EndedCall) EndPart(extract RefExtractor) (storage.CallPart, error) {
	switch {
	case e.ProjectID == "":
		return storage.CallPart{}, Missing("project_id", "")
	case e.ID == "":
		return storage.CallPart{}, Missing("id", ": the id of the call being ended")
	case e.EndedAt.IsZero():
		return storage.CallPart{}, Missing("ended_at", ": an ISO-8601 datetime")
	case e.DisplayName != nil && len(*e.DisplayName) > 1024:
		return storage.CallPart{}, &FieldError{Field: "display_name", Msg: "longer than 1024 characters"}
	}
	if err := CheckID("id", e.ID); err != nil {
		return storage.CallPart{}, err
	}
	if err := checkEnd(e.Output, e.Summary); err != nil {
		return storage.CallPart{}, err
	}
	c := storage.Call{ProjectID: e.ProjectID, ID: e.ID}
	setEnd(&c, e.EndedAt, e.Exception, e.Output, e.Summary, e.WBRunStepEnd, extract)
	return storage.CallPart{Kind: storage.PartEnd, Call: c}, nil
}

// Rename is the update an end carrying a display name stands for, if it
// carries one; userID is the authenticated caller.
func (e *EndedCall) Rename(userID string) (storage.CallOp, bool) {
	if e.DisplayName == nil {
		return storage.CallOp{}, false
	}
	return storage.CallOp{Update: &storage.CallUpdate{ProjectID: e.ProjectID, ID: e.ID, DisplayName: *e.DisplayName, WBUserID: userID}}, true
}

// CompletePart validates a calls_complete item and converts it.
func (cc *CompletedCall) CompletePart(userID string, extract RefExtractor) (storage.CallPart, error) {
	if cc.ID == "" {
		return storage.CallPart{}, Missing("id", "")
	}
	if cc.TraceID == "" {
		return storage.CallPart{}, Missing("trace_id", "")
	}
	if cc.EndedAt.IsZero() {
		return storage.CallPart{}, Missing("ended_at", ": an ISO-8601 datetime")
	}
	if err := checkEnd(cc.Output, cc.Summary); err != nil {
		return storage.CallPart{}, err
	}
	p, err := cc.StartPart(userID, extract)
	if err != nil {
		return p, err
	}
	setEnd(&p.Call, cc.EndedAt, cc.Exception, cc.Output, cc.Summary, cc.WBRunStepEnd, extract)
	p.Kind = storage.PartComplete
	return p, nil
}

func setEnd(c *storage.Call, ended Time, exc *string, output, summary json.RawMessage, step *int64, extract RefExtractor) {
	c.EndedAt = TimePtr(ended)
	c.Exception = exc
	c.Output = nullToNil(output)
	c.Summary = objectOrEmpty(summary)
	c.WBRunStepEnd = step
	if c.Output != nil {
		c.OutputRefs = extract(c.Output)
	}
}

// MustBeObject refuses a value that is present, not null and no JSON
// object, as a schema error naming field.
func MustBeObject(field string, v json.RawMessage) error {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) || v[0] == '{' {
		return nil
	}
	return NotObject(field)
}

func objectOrEmpty(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return json.RawMessage("{}")
	}
	return v
}

func nullToNil(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func newID() string {
	return uuid.Must(uuid.NewV7()).String()
}
