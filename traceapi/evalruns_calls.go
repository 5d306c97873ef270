package traceapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// The op names of an evaluation's calls, as the Python SDK's
// Evaluation.evaluate names them: the UI finds an evaluation, its rows
// and its summary by these names.
const (
	evaluateOp        = "Evaluation.evaluate"
	predictAndScoreOp = "Evaluation.predict_and_score"
	summarizeOp       = "Evaluation.summarize"
	// predictSuffix and scoreSuffix follow the model's or scorer's name:
	// "<model>.predict", "<scorer>.score".
	predictSuffix = ".predict"
	scoreSuffix   = ".score"
	// defaultModelName names the predict op of a model that is not a ref.
	defaultModelName = "Model"
)

// marked is the value of a marker attribute ("attributes.weave.<kind>"):
// a string, as the reference writes it, so it filters as one.
const marked = "true"

// opSourceFile is the file an op object keeps its source in.
const opSourceFile = "obj.py"

// Placeholder sources of the ops this API's calls name: no code ran on
// the server, but the op objects (and the UI's code view) need a source.
const (
	evaluateSource        = "def evaluate(self, model):\n    ...  # recorded through the evaluation runs API\n"
	predictAndScoreSource = "def predict_and_score(self, model, example):\n    ...  # recorded through the evaluation runs API\n"
	predictSource         = "def predict(self, inputs):\n    ...  # recorded through the predictions API\n"
	scoreSource           = "def score(self, inputs, output):\n    ...  # recorded through the scores API\n"
)

// runMarks is attributes.weave of an evaluation run's call.
type runMarks struct {
	EvaluationRun string `json:"evaluation_run"`
	Evaluation    string `json:"evaluation"`
	Model         string `json:"model"`
}

// predictAndScoreMarks is attributes.weave of the predict_and_score call
// a prediction of a run sits under.
type predictAndScoreMarks struct {
	PredictCallID string `json:"predict_call_id"`
}

// predictionMarks is attributes.weave of a prediction's call.
type predictionMarks struct {
	Prediction      string `json:"prediction"`
	Model           string `json:"model"`
	EvaluationRunID string `json:"evaluation_run_id,omitempty"`
}

// scoreMarks is attributes.weave of a score's call.
type scoreMarks struct {
	Score           string `json:"score"`
	PredictionID    string `json:"prediction_id"`
	Scorer          string `json:"scorer"`
	EvaluationRunID string `json:"evaluation_run_id,omitempty"`
}

// weaveAttrs wraps marks in the attributes namespace they live under.
func weaveAttrs(marks any) map[string]any { return map[string]any{"weave": marks} }

// markPath is the calls-query path of a marker attribute.
func markPath(key string) string { return "attributes.weave." + key }

// marksOf reads the string members of a call's attributes.weave; values of
// other types (a call the SDK wrote) read as absent.
func marksOf(c storage.Call) map[string]string {
	var attrs struct {
		Weave map[string]json.RawMessage `json:"weave"`
	}
	_ = json.Unmarshal(c.Attributes, &attrs)
	out := make(map[string]string, len(attrs.Weave))
	for k, v := range attrs.Weave {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		}
	}
	return out
}

// inputString is a string member of a call's inputs, "" when absent.
func inputString(c storage.Call, key string) string {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(c.Inputs, &in)
	var s string
	_ = json.Unmarshal(in[key], &s)
	return s
}

// inputValue is a member of a call's inputs as JSON, nil when absent.
func inputValue(c storage.Call, key string) json.RawMessage {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(c.Inputs, &in)
	if v := bytes.TrimSpace(in[key]); len(v) > 0 && !bytes.Equal(v, []byte("null")) {
		return v
	}
	return nil
}

// opIs reports whether a call's op name (an op ref or a plain name)
// names op.
func opIs(opName, op string) bool { return wire.TraceName(opName) == op }

// callStatus is a record's status: running until its call ends, then
// completed, or failed when it ended with an exception.
func callStatus(c storage.Call) string {
	switch {
	case c.EndedAt == nil:
		return "running"
	case c.Exception != nil:
		return "failed"
	}
	return "completed"
}

// modelOpName is the predict op of a model: "<name>.predict" for a model
// given as an object or op ref, "Model.predict" otherwise.
func modelOpName(model string) string {
	if r, err := refs.Parse(model); err == nil && (r.Kind == refs.KindObject || r.Kind == refs.KindOp) {
		return r.Name + predictSuffix
	}
	return defaultModelName + predictSuffix
}

// scoreKey names a score in its predict_and_score call's scores: the
// scorer ref's object name, "unknown" when the ref has none.
func scoreKey(scorer string) string {
	last := scorer[strings.LastIndexByte(scorer, '/')+1:]
	if name, _, ok := strings.Cut(last, ":"); ok && name != "" {
		return name
	}
	return "unknown"
}

// evalCall is the start side of one call this API writes.
type evalCall struct {
	id, traceID, parentID, opName string
	attributes, inputs            any
}

// startedCall renders c as the SDK would send its start.
func startedCall(projectID string, c evalCall, at time.Time) (wire.StartedCall, error) {
	attrs, err := marshalJSON(c.attributes)
	if err != nil {
		return wire.StartedCall{}, err
	}
	inputs, err := marshalJSON(c.inputs)
	if err != nil {
		return wire.StartedCall{}, err
	}
	s := wire.StartedCall{ProjectID: projectID, ID: c.id, TraceID: c.traceID, OpName: c.opName,
		StartedAt: wire.Time{Time: at}, Attributes: attrs, Inputs: inputs}
	if c.parentID != "" {
		s.ParentID = &c.parentID
	}
	return s, nil
}

// startOp is c's start part, written by userID; the call runs until an end
// part arrives.
func startOp(projectID, userID string, c evalCall, at time.Time) (storage.CallOp, error) {
	s, err := startedCall(projectID, c, at)
	if err != nil {
		return storage.CallOp{}, err
	}
	part, err := s.StartPart(userID, refs.ExtractRefs)
	return storage.CallOp{Part: &part}, err
}

// completeOp is c started and ended at once with output and an empty
// summary.
func completeOp(projectID, userID string, c evalCall, started, ended time.Time, output json.RawMessage) (storage.CallOp, error) {
	s, err := startedCall(projectID, c, started)
	if err != nil {
		return storage.CallOp{}, err
	}
	cc := wire.CompletedCall{StartedCall: s, EndedAt: wire.Time{Time: ended}, Output: output}
	part, err := cc.CompletePart(userID, refs.ExtractRefs)
	return storage.CallOp{Part: &part}, err
}

// endOp ends call id with output and summary (nil: {}).
func endOp(projectID, id string, at time.Time, output, summary json.RawMessage) (storage.CallOp, error) {
	e := wire.EndedCall{ProjectID: projectID, ID: id, EndedAt: wire.Time{Time: at}, Output: output, Summary: summary}
	part, err := e.EndPart(refs.ExtractRefs)
	return storage.CallOp{Part: &part}, err
}

// marshalJSON encodes v as stored JSON: without encoding/json's HTML
// escaping, so user values keep the text they were sent with.
func marshalJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// opRef makes sure the project has the placeholder op the calls name (its
// source file, then the op object; both are content-addressed, so writing
// them again stores nothing new) and returns the op ref. As in the
// reference, the ref carries the op's name while the object is stored
// under its safe id (lowercased), so a placeholder never becomes the
// latest version of an op the SDK published under the same name.
func (a *EvaluationRunsAPI) opRef(ctx context.Context, projectID, userID, name, source string) (string, error) {
	if ref, ok := a.ops.get(projectID, name); ok {
		return ref, nil
	}
	file, err := a.stores.Files.CreateFile(ctx, storage.FileCreateReq{ProjectID: projectID, Name: opSourceFile,
		Content: strings.NewReader(source)})
	if err != nil {
		return "", fmt.Errorf("storing the source of op %s: %w", name, err)
	}
	val, err := marshalJSON(map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]string{"type": "Op"},
		"files": map[string]string{opSourceFile: file.Digest}})
	if err != nil {
		return "", err
	}
	obj := storage.ObjSchemaForInsert{ProjectID: projectID, ObjectID: safeObjectID(name), Val: val}
	if userID != "" {
		obj.WBUserID = &userID
	}
	res, err := a.stores.Objects.CreateObject(ctx, storage.ObjCreateReq{Obj: obj})
	if err != nil {
		return "", fmt.Errorf("storing op %s: %w", name, err)
	}
	ref := "weave:///" + projectID + "/op/" + name + ":" + res.Digest
	a.ops.put(projectID, name, ref)
	return ref, nil
}

// maxKnownOps bounds opRefs: past it, the cache starts over.
const maxKnownOps = 4096

// opRefs remembers the op refs a process has made sure of, so each
// record does not write its ops again (six store writes for a scored
// row of a run). An op object deleted later is not written again until
// the process restarts or the cache starts over; its ref dangles
// meanwhile, as refs to deleted objects do.
type opRefs struct {
	mu   sync.Mutex
	refs map[[2]string]string
}

func (o *opRefs) get(projectID, name string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ref, ok := o.refs[[2]string{projectID, name}]
	return ref, ok
}

func (o *opRefs) put(projectID, name, ref string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.refs == nil || len(o.refs) >= maxKnownOps {
		o.refs = map[[2]string]string{}
	}
	o.refs[[2]string{projectID, name}] = ref
}

// safeObjectID is the object id the reference derives from a name:
// spaces and slashes become underscores, angle brackets go, all lower
// case.
func safeObjectID(name string) string {
	return strings.ToLower(strings.NewReplacer(" ", "_", "/", "_", "<", "", ">", "").Replace(name))
}
