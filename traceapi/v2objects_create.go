package traceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// sourceFileName is the file of an op's or a model's source code, as the
// SDKs name it in the value's files map.
const sourceFileName = "obj.py"

// Source code of the ops the server creates itself, for an op sent
// without any and for the methods of scorers and evaluations that the
// API does not take code for.
const (
	placeholderOpSource        = "def func(*args, **kwargs):\n    ...  # created without source code\n"
	placeholderScorerSummarize = "def summarize(score_rows: list) -> dict | None:\n" +
		"    from weave.flow.scorer import auto_summarize\n\n    return auto_summarize(score_rows)\n"
	placeholderEvaluate = "import weave\n\n\n@weave.op\ndef evaluate(evaluation, model):\n" +
		"    ...  # created by the evaluations API without an implementation\n"
	placeholderPredictAndScore = "import weave\n\n\n@weave.op\ndef predict_and_score(evaluation, example):\n" +
		"    ...  # created by the evaluations API without an implementation\n"
	placeholderEvaluationSummarize = "import weave\n\n\n@weave.op\ndef summarize(evaluation_results):\n" +
		"    ...  # created by the evaluations API without an implementation\n"
	placeholderModelSource = "import weave\n\n\n@weave.op\ndef predict(model, **inputs):\n" +
		"    return model.predict(**inputs)\n"
)

// objectBases are the _bases of a direct weave.Object subclass: they make
// the class its own base_object_class.
var objectBases = []string{"Object", "BaseModel"}

// created answers a create: the version the object now has.
type created struct {
	Digest       string `json:"digest"`
	ObjectID     string `json:"object_id"`
	VersionIndex int64  `json:"version_index"`
}

// publisher writes the objects of one create request into its project,
// authored by its caller.
type publisher struct {
	a         *V2ObjectsAPI
	projectID string
	userID    *string
}

// publish creates a version of objectID holding val, as /obj/create
// would, and reads back its version index (an unchanged value keeps the
// version it had).
func (p publisher) publish(ctx context.Context, objectID string, val members) (created, error) {
	raw, err := json.Marshal(val)
	if err != nil {
		return created{}, fmt.Errorf("encode %s: %w", objectID, err)
	}
	res, err := p.a.objects.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
		ProjectID: p.projectID, ObjectID: objectID, Val: raw, WBUserID: p.userID}})
	if err != nil {
		return created{}, err
	}
	read, err := p.a.objects.ReadObject(ctx, storage.ObjReadReq{ProjectID: p.projectID, ObjectID: objectID,
		Digest: res.Digest, MetadataOnly: true})
	if err != nil {
		return created{}, fmt.Errorf("read back %s:%s: %w", objectID, res.Digest, err)
	}
	return created{Digest: res.Digest, ObjectID: objectID, VersionIndex: read.Obj.VersionIndex}, nil
}

// uploadSource stores code as the source file and returns its digest.
func (p publisher) uploadSource(ctx context.Context, code string) (string, error) {
	info, err := p.a.files.CreateFile(ctx, storage.FileCreateReq{ProjectID: p.projectID, Name: sourceFileName,
		Content: strings.NewReader(code)})
	if err != nil {
		return "", fmt.Errorf("store source file: %w", err)
	}
	return info.Digest, nil
}

// op publishes an op of the given source, stored as the SDK stores one:
// a custom type whose files map names the source file.
func (p publisher) op(ctx context.Context, objectID, code string) (created, error) {
	if code == "" {
		code = placeholderOpSource
	}
	file, err := p.uploadSource(ctx, code)
	if err != nil {
		return created{}, err
	}
	return p.publish(ctx, objectID, members{
		{"_type", "CustomWeaveType"},
		{"weave_type", members{{"type", "Op"}}},
		{"files", members{{sourceFileName, file}}},
	})
}

// ref is the weave:// ref of a created version.
func (p publisher) ref(kind refs.Kind, c created) string {
	return refs.Ref{Scheme: refs.SchemeWeave, ProjectID: p.projectID, Kind: kind, Name: c.ObjectID, Version: c.Digest}.String()
}

// objectIDFor makes the object id of a name as the reference does:
// lower case, spaces and slashes turned to underscores, angle brackets
// dropped; fallback when there is no name. The ids derived from it must
// be valid object ids, checked before anything is written.
func objectIDFor(name *string, fallback string, derived ...string) (string, []string, error) {
	id := fallback
	if name != nil {
		id = strings.ToLower(strings.NewReplacer(" ", "_", "/", "_", "<", "", ">", "").Replace(*name))
	}
	ids := []string{id}
	for _, suffix := range derived {
		ids = append(ids, id+suffix)
	}
	for _, each := range ids {
		if err := storage.ValidateObjectID(each); err != nil {
			return "", nil, err
		}
	}
	return id, ids[1:], nil
}

// createOpV2 answers POST .../ops: name and source_code, both optional.
func createOpV2(ctx context.Context, pub publisher, body []byte) (any, error) {
	var name *string
	var code string
	if err := wire.DecodeTop(body, wire.Fields{"name": &name, "source_code": &code}); err != nil {
		return nil, err
	}
	id, _, err := objectIDFor(name, "Op")
	if err != nil {
		return nil, err
	}
	return pub.op(ctx, id, code)
}

// createDataset answers POST .../datasets: the rows become a table, and
// the Dataset object refers to it by a table ref.
func createDataset(ctx context.Context, pub publisher, body []byte) (any, error) {
	var name, description *string
	var rows []json.RawMessage
	err := wire.DecodeTop(body, wire.Fields{"name": &name, "description": &description, "rows": &rows}, "rows")
	if err != nil {
		return nil, err
	}
	for i, row := range rows {
		if err := wire.MustBeObject(fmt.Sprintf("rows[%d]", i), row); err != nil {
			return nil, err
		}
	}
	id, _, err := objectIDFor(name, "Dataset")
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = []json.RawMessage{}
	}
	table, err := pub.a.tables.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{
		ProjectID: pub.projectID, Rows: rows}})
	if err != nil {
		return nil, err
	}
	shown := "Dataset"
	if name != nil {
		shown = *name
	}
	tableRef := refs.Ref{Scheme: refs.SchemeWeave, ProjectID: pub.projectID, Kind: refs.KindTable, Digest: table.Digest}
	return pub.publish(ctx, id, members{
		{"_type", "Dataset"}, {"_class_name", "Dataset"}, {"_bases", objectBases},
		{"name", shown}, {"description", description}, {"rows", tableRef.String()},
	})
}

// createScorer answers POST .../scorers: the score op holds the code sent,
// the summarize op a default, and the Scorer object refers to both.
func createScorer(ctx context.Context, pub publisher, body []byte) (any, error) {
	var name, code string
	var description *string
	err := wire.DecodeTop(body, wire.Fields{"name": &name, "description": &description, "op_source_code": &code},
		"name", "op_source_code")
	if err != nil {
		return nil, err
	}
	id, ops, err := objectIDFor(&name, "Scorer", "_score", "_summarize")
	if err != nil {
		return nil, err
	}
	score, err := pub.op(ctx, ops[0], code)
	if err != nil {
		return nil, err
	}
	summarize, err := pub.op(ctx, ops[1], placeholderScorerSummarize)
	if err != nil {
		return nil, err
	}
	// The reference stores the ops' bare digests here; refs are what its
	// schema promises and what the SDK and /refs/read_batch resolve.
	c, err := pub.publish(ctx, id, members{
		{"_type", "Scorer"}, {"_class_name", "Scorer"}, {"_bases", objectBases},
		{"name", name}, {"description", description},
		{"score", pub.ref(refs.KindOp, score)}, {"summarize", pub.ref(refs.KindOp, summarize)},
		{"column_map", nil},
	})
	if err != nil {
		return nil, err
	}
	return struct {
		created
		Scorer string `json:"scorer"`
	}{c, pub.ref(refs.KindObject, c)}, nil
}

// evaluationBody is the body of POST .../evaluations.
type evaluationBody struct {
	name, dataset               string
	description, evaluationName *string
	scorers                     []string
	trials                      *int64
	attributes                  json.RawMessage
}

func decodeEvaluation(body []byte) (evaluationBody, error) {
	var e evaluationBody
	err := wire.DecodeTop(body, wire.Fields{"name": &e.name, "description": &e.description, "dataset": &e.dataset,
		"scorers": &e.scorers, "trials": &e.trials, "evaluation_name": &e.evaluationName,
		"eval_attributes": &e.attributes}, "name", "dataset")
	if err != nil {
		return e, err
	}
	if err := mustBeRef("dataset", e.dataset); err != nil {
		return e, err
	}
	for i, s := range e.scorers {
		if err := mustBeRef(fmt.Sprintf("scorers[%d]", i), s); err != nil {
			return e, err
		}
	}
	if e.trials != nil && *e.trials < 1 {
		return e, &wire.FieldError{Field: "trials", Msg: fmt.Sprintf("must be 1 or more, got %d", *e.trials)}
	}
	return e, wire.MustBeObject("eval_attributes", e.attributes)
}

// createEvaluation answers POST .../evaluations: its evaluate,
// predict_and_score and summarize methods become placeholder ops, and the
// Evaluation object refers to them, to the dataset and to the scorers.
func createEvaluation(ctx context.Context, pub publisher, body []byte) (any, error) {
	e, err := decodeEvaluation(body)
	if err != nil {
		return nil, err
	}
	methods := []struct{ field, source string }{
		{"evaluate", placeholderEvaluate},
		{"predict_and_score", placeholderPredictAndScore},
		{"summarize", placeholderEvaluationSummarize},
	}
	id, opIDs, err := objectIDFor(&e.name, "Evaluation", "_"+methods[0].field, "_"+methods[1].field, "_"+methods[2].field)
	if err != nil {
		return nil, err
	}
	val := members{
		{"_type", "Evaluation"}, {"_class_name", "Evaluation"}, {"_bases", objectBases},
		{"name", e.name}, {"description", e.description}, {"dataset", e.dataset},
		{"scorers", append([]string{}, e.scorers...)}, {"trials", orDefault(e.trials, 1)},
		{"evaluation_name", e.evaluationName}, {"metadata", nil}, {"preprocess_model_input", nil}, {"on_complete", nil},
	}
	extra, err := extraAttributes("eval_attributes", e.attributes, val, methods[0].field, methods[1].field, methods[2].field)
	if err != nil {
		return nil, err
	}
	for i, m := range methods {
		op, err := pub.op(ctx, opIDs[i], m.source)
		if err != nil {
			return nil, err
		}
		val = append(val, member{m.field, pub.ref(refs.KindOp, op)})
	}
	c, err := pub.publish(ctx, id, append(val, extra...))
	if err != nil {
		return nil, err
	}
	return struct {
		created
		EvaluationRef string `json:"evaluation_ref"`
	}{c, pub.ref(refs.KindObject, c)}, nil
}

// createModel answers POST .../models: the source code becomes the
// model's source file, and attributes are fields of the Model object.
func createModel(ctx context.Context, pub publisher, body []byte) (any, error) {
	var name, code string
	var description *string
	var attributes json.RawMessage
	err := wire.DecodeTop(body, wire.Fields{"name": &name, "description": &description, "source_code": &code,
		"attributes": &attributes}, "name", "source_code")
	if err == nil {
		err = wire.MustBeObject("attributes", attributes)
	}
	if err != nil {
		return nil, err
	}
	id, _, err := objectIDFor(&name, "Model")
	if err != nil {
		return nil, err
	}
	val := members{{"_type", "Model"}, {"_class_name", "Model"}, {"_bases", objectBases},
		{"name", name}, {"description", description}}
	extra, err := extraAttributes("attributes", attributes, val, "files")
	if err != nil {
		return nil, err
	}
	if code == "" {
		code = placeholderModelSource
	}
	file, err := pub.uploadSource(ctx, code)
	if err != nil {
		return nil, err
	}
	val = append(val, member{"files", members{{sourceFileName, file}}})
	c, err := pub.publish(ctx, id, append(val, extra...))
	if err != nil {
		return nil, err
	}
	return struct {
		created
		ModelRef string `json:"model_ref"`
	}{c, pub.ref(refs.KindObject, c)}, nil
}

// extraAttributes are the members of a create's attributes object, to be
// stored as fields of the value. A field the server sets (val's or one of
// reserved) is refused: the reference would let it overwrite the class
// markers or refs and store an object no reader recognises.
func extraAttributes(field string, raw json.RawMessage, val members, reserved ...string) (members, error) {
	attrs, err := orderedMembers(raw)
	if err != nil {
		return nil, &wire.FieldError{Field: field, Msg: err.Error(), Schema: wire.SchemaDict}
	}
	for _, m := range val {
		reserved = append(reserved, m.key)
	}
	for _, m := range attrs {
		for _, r := range reserved {
			if m.key == r {
				return nil, &wire.FieldError{Field: field + "." + m.key,
					Msg: "is a field the server sets; give the attribute another name"}
			}
		}
	}
	return attrs, nil
}

// mustBeRef refuses a value that is no weave:// ref.
func mustBeRef(field, s string) error {
	if _, err := refs.Parse(s); err != nil || !strings.HasPrefix(s, "weave:///") {
		return &wire.FieldError{Field: field, Msg: fmt.Sprintf(
			"%q is not a ref; send a weave:///<entity>/<project>/object/<name>:<digest> ref", s)}
	}
	return nil
}

// orDefault is *v, or def when v is nil.
func orDefault(v *int64, def int64) int64 {
	if v == nil {
		return def
	}
	return *v
}
