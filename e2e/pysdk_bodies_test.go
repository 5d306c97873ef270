package e2e

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// The request bodies the Weave Python SDK builds. It serialises its
// pydantic request models with model_dump_json(by_alias=True), so every
// optional field is present, null when unset; defaults of newer fields
// (feedback's scorer and span fields) are sent as their empty values.

// pyGraphQL are the documents the SDK's GraphQL client sends, as gql
// prints them (weave/compat/wandb/wandb_thin/internal_api.py).
var pyGraphQL = struct{ defaultEntity, project, upsert string }{
	defaultEntity: "query DefaultEntity {\n  viewer {\n    username\n    defaultEntity {\n      name\n    }\n  }\n}",
	project:       "query Project($name: String!, $entityName: String!) {\n  project(name: $name, entityName: $entityName) {\n    name\n  }\n}",
	upsert: "mutation UpsertModel($name: String!, $id: String, $entity: String!, $description: String, $repo: String) {\n" +
		"  upsertModel(\n    input: {id: $id, name: $name, entityName: $entity, description: $description, repo: $repo}\n  ) {\n" +
		"    model {\n      name\n      description\n    }\n  }\n}",
}

// pyAttributes are the attributes the SDK puts on every call.
func pyAttributes() map[string]any {
	return map[string]any{"weave": map[string]any{"client_version": "0.52.20", "source": "python-sdk",
		"os_name": "Linux", "os_version": "#1 SMP", "os_release": "6.1.0", "sys_version": "3.12.3"}}
}

func pyNow(offset time.Duration) string {
	return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(offset).Format("2006-01-02T15:04:05.000000Z")
}

func pyID() string { return uuid.Must(uuid.NewV7()).String() }

// pyCall is one call the SDK traced: the fields of its start and end.
type pyCall struct {
	id, traceID, parentID, opRef string
	inputs                       map[string]any
	output                       any
	start, end                   time.Duration // offsets from pyNow(0)
}

// startFields are StartedCallSchemaForInsert.
func (c pyCall) startFields(project string) map[string]any {
	var parent any
	if c.parentID != "" {
		parent = c.parentID
	}
	return map[string]any{"project_id": project, "id": c.id, "op_name": c.opRef, "display_name": nil,
		"trace_id": c.traceID, "parent_id": parent, "thread_id": nil, "turn_id": nil, "started_at": pyNow(c.start),
		"attributes": pyAttributes(), "inputs": c.inputs, "otel_dump": nil, "wb_user_id": nil, "wb_run_id": nil, "wb_run_step": nil}
}

// endFields are EndedCallSchemaForInsert as the eager path sends it.
func (c pyCall) endFields(project string) map[string]any {
	return map[string]any{"project_id": project, "id": c.id, "trace_id": c.traceID, "started_at": pyNow(c.start),
		"ended_at": pyNow(c.end), "exception": nil, "output": c.output, "summary": pySummary(), "wb_run_step_end": nil}
}

// complete is CompletedCallSchemaForInsert: the start and end in one.
func (c pyCall) complete(project string) map[string]any {
	m := c.startFields(project)
	for k, v := range c.endFields(project) {
		m[k] = v
	}
	return m
}

// pySummary is what the SDK sends for a call without LLM usage.
func pySummary() map[string]any {
	return map[string]any{"usage": map[string]any{}, "status_counts": map[string]any{"success": 1, "error": 0}}
}

// pyObject is a JSON object with its keys in the order given (key,
// value, key, value, ...), as Python dicts keep the order they were built
// in: an object's fields, then _class_name and _bases.
func pyObject(kv ...any) json.RawMessage {
	out := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(kv[i])
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			panic(err)
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, '}')
}

// pyOpVal is the value of a saved op: its source, stored as a file.
func pyOpVal(sourceDigest string) json.RawMessage {
	return pyObject("_type", "CustomWeaveType", "weave_type", map[string]any{"type": "Op"},
		"files", map[string]any{"obj.py": sourceDigest}, "load_op", nil)
}

// pyObjCreate is ObjCreateReq.
func pyObjCreate(project, objectID string, val any) map[string]any {
	return map[string]any{"obj": map[string]any{"project_id": project, "object_id": objectID, "val": val,
		"builtin_object_class": nil, "set_base_object_class": nil, "expected_digest": nil, "wb_user_id": nil}}
}

// pyRunnableFeedback is the score feedback an evaluation attaches to a
// predict_and_score call.
func pyRunnableFeedback(project, scorer, scorerRef, targetCall, scorerCall string, output any) map[string]any {
	return map[string]any{"id": pyID(), "project_id": project, "weave_ref": "weave:///" + project + "/call/" + targetCall,
		"creator": nil, "feedback_type": "wandb.runnable." + scorer, "payload": map[string]any{"output": output},
		"annotation_ref": nil, "runnable_ref": scorerRef, "call_ref": "weave:///" + project + "/call/" + scorerCall,
		"trigger_ref": nil, "queue_id": nil, "wb_user_id": nil,
		"scorer_tags": []any{}, "scorer_tag_reasons": map[string]any{}, "scorer_tag_confidences": map[string]any{},
		"scorer_ratings": map[string]any{}, "scorer_rating_reasons": map[string]any{}, "scorer_rating_confidences": map[string]any{},
		"span_agent_name": "", "span_agent_version": "", "span_status_code": "UNSET", "span_conversation_id": "",
		"span_trace_id": "", "scorer_trace_id": ""}
}
