package traceapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// v2Version is what every read and list answer says of the version.
type v2Version struct {
	ObjectID     string    `json:"object_id"`
	Digest       string    `json:"digest"`
	VersionIndex int64     `json:"version_index"`
	CreatedAt    wire.Time `json:"created_at"`
}

func versionOf(o storage.ObjSchema) v2Version {
	return v2Version{ObjectID: o.ObjectID, Digest: o.Digest, VersionIndex: o.VersionIndex, CreatedAt: wire.Time{Time: o.CreatedAt}}
}

// storedVal is an object's value as the views read it. Objects published
// by any client are read, so every field is optional and a field of an
// unexpected type reads as absent.
type storedVal struct {
	ordered members
	byKey   map[string]json.RawMessage
}

func parseVal(raw json.RawMessage) storedVal {
	ms, err := orderedMembers(raw)
	if err != nil {
		ms = nil // not an object: no fields
	}
	v := storedVal{ordered: ms, byKey: make(map[string]json.RawMessage, len(ms))}
	for _, m := range ms {
		v.byKey[m.key] = m.val.(json.RawMessage)
	}
	return v
}

// str is a string field, nil when absent, null or not a string.
func (v storedVal) str(key string) *string {
	var s *string
	if raw, ok := v.byKey[key]; !ok || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return s
}

// strOr is a string field, def when absent or not a string.
func (v storedVal) strOr(key, def string) string {
	if s := v.str(key); s != nil {
		return *s
	}
	return def
}

// sourceReader reads the source file of an op or a model of one project.
type sourceReader struct {
	files     storage.FileStore
	projectID string
	max       int64
}

// code is the text of the source file v's files map names: "" when it
// names none or the file is not stored, as the reference answers.
func (s sourceReader) code(ctx context.Context, v storedVal) (string, error) {
	var files map[string]json.RawMessage
	var digest string
	if json.Unmarshal(v.byKey["files"], &files) != nil || json.Unmarshal(files[sourceFileName], &digest) != nil {
		return "", nil
	}
	_, rc, err := s.files.OpenFile(ctx, s.projectID, digest)
	if errors.Is(err, storage.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer rc.Close()
	text, err := io.ReadAll(io.LimitReader(rc, s.max+1))
	if err != nil {
		return "", fmt.Errorf("read source file %s: %w", digest, err)
	}
	if int64(len(text)) > s.max {
		return "", httpapi.Errorf(http.StatusUnprocessableEntity, fmt.Sprintf(
			"the source file %s is larger than %d bytes (max_request_bytes); read it with /files/content", digest, s.max))
	}
	return string(text), nil
}

func viewOp(ctx context.Context, src sourceReader, o storage.ObjSchema) (any, error) {
	v := parseVal(o.Val)
	var code string
	if v.strOr("_type", "") == "CustomWeaveType" {
		var err error
		if code, err = src.code(ctx, v); err != nil {
			return nil, err
		}
	}
	return struct {
		v2Version
		Code string `json:"code"`
	}{versionOf(o), code}, nil
}

func viewDataset(_ context.Context, _ sourceReader, o storage.ObjSchema) (any, error) {
	v := parseVal(o.Val)
	return struct {
		v2Version
		Name        string  `json:"name"`
		Description *string `json:"description"`
		Rows        string  `json:"rows"`
	}{versionOf(o), v.strOr("name", o.ObjectID), v.str("description"), v.strOr("rows", "")}, nil
}

func viewScorer(_ context.Context, _ sourceReader, o storage.ObjSchema) (any, error) {
	v := parseVal(o.Val)
	return struct {
		v2Version
		Name        string  `json:"name"`
		Description *string `json:"description"`
		ScoreOp     string  `json:"score_op"`
	}{versionOf(o), v.strOr("name", o.ObjectID), v.str("description"), v.strOr("score", "")}, nil
}

func viewEvaluation(_ context.Context, _ sourceReader, o storage.ObjSchema) (any, error) {
	v := parseVal(o.Val)
	var listed []json.RawMessage
	_ = json.Unmarshal(v.byKey["scorers"], &listed)
	scorers := []string{}
	for _, raw := range listed {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			scorers = append(scorers, s)
		}
	}
	trials := int64(1)
	_ = json.Unmarshal(v.byKey["trials"], &trials)
	return struct {
		v2Version
		Name              string   `json:"name"`
		Description       *string  `json:"description"`
		Dataset           string   `json:"dataset"`
		Scorers           []string `json:"scorers"`
		Trials            int64    `json:"trials"`
		EvaluationName    *string  `json:"evaluation_name"`
		EvaluateOp        string   `json:"evaluate_op"`
		PredictAndScoreOp string   `json:"predict_and_score_op"`
		SummarizeOp       string   `json:"summarize_op"`
	}{versionOf(o), v.strOr("name", o.ObjectID), v.str("description"), v.strOr("dataset", ""), scorers, trials,
		v.str("evaluation_name"), v.strOr("evaluate", ""), v.strOr("predict_and_score", ""), v.strOr("summarize", "")}, nil
}

// modelFields are the members of a Model value that are not attributes.
var modelFields = []string{"_type", "_class_name", "_bases", "name", "description", "files"}

func viewModel(ctx context.Context, src sourceReader, o storage.ObjSchema) (any, error) {
	v := parseVal(o.Val)
	code, err := src.code(ctx, v)
	if err != nil {
		return nil, err
	}
	var attributes members // nil (JSON null) when there are none
	for _, m := range v.ordered {
		if !slices.Contains(modelFields, m.key) {
			attributes = append(attributes, m)
		}
	}
	return struct {
		v2Version
		Name        string  `json:"name"`
		Description *string `json:"description"`
		SourceCode  string  `json:"source_code"`
		Attributes  members `json:"attributes"`
	}{versionOf(o), v.strOr("name", o.ObjectID), v.str("description"), code, attributes}, nil
}

// member is one member of a JSON object.
type member struct {
	key string
	val any
}

// members is a JSON object that keeps its members in order: a value is
// stored in the order it is written, as the SDKs write theirs.
type members []member

// MarshalJSON writes the members in order; nil is null.
func (ms members) MarshalJSON() ([]byte, error) {
	if ms == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(m.val)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", m.key, err)
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// orderedMembers decodes a JSON object into its members in order, each
// value a json.RawMessage; empty input or null is no members.
func orderedMembers(raw json.RawMessage) (members, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("must be a JSON object")
	}
	var ms members
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		ms = append(ms, member{tok.(string), val})
	}
	return ms, nil
}
