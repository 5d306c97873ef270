package traceapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// MaxActionBatch is the most calls one /actions/execute_batch acts on:
// an LLM judge asks a model once per call, while the request waits.
const MaxActionBatch = 32

// The action kinds (ActionSpec.config.action_type) the server runs.
const (
	actionLLMJudge      = "llm_judge"
	actionContainsWords = "contains_words"
)

// Completer runs one chat completion for a project on behalf of p; the
// inference gateway is one. Its errors may carry the status to answer
// with a StatusCode method.
type Completer interface {
	Complete(ctx context.Context, p auth.Principal, projectID string, request json.RawMessage) (json.RawMessage, error)
}

// actionsStore is what running actions reads: the action object and the
// calls it acts on.
type actionsStore interface {
	ReadObject(ctx context.Context, req storage.ObjReadReq) (storage.ObjReadRes, error)
	QueryCalls(ctx context.Context, q storage.CallsQuery) iter.Seq2[storage.StoredCall, error]
}

// ActionsAPI serves POST /actions/execute_batch: it runs a stored action
// (an ActionSpec object) on calls and stores each result as runnable
// feedback on its call, as the reference's actions worker does.
type ActionsAPI struct {
	store    actionsStore
	feedback *FeedbackAPI // validates and stores the results
	llm      Completer    // nil: LLM judges cannot run
	logger   *slog.Logger
	maxBytes int64
}

// NewActionsAPI builds the actions endpoint; llm may be nil.
func NewActionsAPI(store actionsStore, feedback *FeedbackAPI, llm Completer, maxBodyBytes int64, logger *slog.Logger) *ActionsAPI {
	return &ActionsAPI{store: store, feedback: feedback, llm: llm, logger: logger, maxBytes: maxBodyBytes}
}

// Register adds the route to mux; wrap is applied to the handler.
func (a *ActionsAPI) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	mux.Handle("POST /actions/execute_batch", wrap(httpapi.JSON(a.logger, a.maxBytes, a.executeBatch)))
}

// actionConfig is ActionSpec.config, the union of LlmJudgeActionConfig
// and ContainsWordsActionConfig.
type actionConfig struct {
	ActionType     string          `json:"action_type"`
	Model          string          `json:"model"`
	Prompt         string          `json:"prompt"`
	ResponseSchema json.RawMessage `json:"response_schema"`
	TargetWords    []string        `json:"target_words"`
}

func (a *ActionsAPI) executeBatch(r *http.Request, body []byte) (any, error) {
	var (
		projectID, actionRef string
		callIDs              []string
		userID               *string
	)
	err := wire.DecodeTop(body, wire.Fields{"project_id": &projectID, "action_ref": &actionRef, "call_ids": &callIDs,
		"wb_user_id": &userID}, "project_id", "action_ref", "call_ids")
	if err != nil {
		return nil, err
	}
	if len(callIDs) > MaxActionBatch {
		return nil, &wire.FieldError{Field: "call_ids", Msg: fmt.Sprintf("%d calls, at most %d per request; split the batch", len(callIDs), MaxActionBatch)}
	}
	p, err := httpapi.Authorize(r.Context(), projectID, auth.Write)
	if err != nil {
		return nil, err
	}
	ref, config, err := a.readAction(r.Context(), projectID, actionRef)
	if err != nil {
		return nil, err
	}
	if len(callIDs) == 0 {
		return struct{}{}, nil
	}
	var rows []storage.Feedback
	for c, err := range a.store.QueryCalls(r.Context(), storage.CallsQuery{ProjectID: projectID,
		Filter: storage.CallsFilter{CallIDs: callIDs}, Limit: int64(len(callIDs))}) {
		if err != nil {
			return nil, err
		}
		result, err := a.run(r.Context(), p, projectID, config, c.Call)
		if err != nil {
			return nil, fmt.Errorf("call %s: %w", c.ID, err)
		}
		row, err := a.feedback.rules.row(feedbackReq{ProjectID: projectID, WeaveRef: "weave:///" + projectID + "/call/" + c.ID,
			FeedbackType: runnablePrefix + "." + ref.Name, RunnableRef: &actionRef,
			Payload: append(append([]byte(`{"output":`), result...), '}')}, p.UserID)
		if err != nil {
			return nil, fmt.Errorf("call %s: %w", c.ID, err)
		}
		rows = append(rows, row)
	}
	if err := a.feedback.store.CreateFeedback(r.Context(), rows); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// readAction resolves action_ref, an object ref into the project, to
// the action's configuration.
func (a *ActionsAPI) readAction(ctx context.Context, projectID, actionRef string) (refs.Ref, actionConfig, error) {
	var config actionConfig
	ref, err := refs.Parse(actionRef)
	if err != nil || ref.Scheme != refs.SchemeWeave || ref.Kind != refs.KindObject || len(ref.Extra) > 0 {
		return ref, config, &wire.FieldError{Field: "action_ref", Msg: fmt.Sprintf("%q is not an object ref; use weave:///<entity>/<project>/object/<name>:<digest>", actionRef)}
	}
	if ref.ProjectID != projectID {
		return ref, config, &wire.FieldError{Field: "action_ref", Msg: fmt.Sprintf("points into project %q, not %q", ref.ProjectID, projectID)}
	}
	obj, err := a.store.ReadObject(ctx, storage.ObjReadReq{ProjectID: projectID, ObjectID: ref.Name, Digest: ref.Version})
	if err != nil {
		return ref, config, err
	}
	var spec struct {
		Config *actionConfig `json:"config"`
	}
	if json.Unmarshal(obj.Obj.Val, &spec) != nil || spec.Config == nil {
		return ref, config, &wire.FieldError{Field: "action_ref", Msg: fmt.Sprintf("%s is not an ActionSpec: it has no config object", actionRef)}
	}
	config = *spec.Config
	switch config.ActionType {
	case actionLLMJudge:
		if config.Model == "" || len(bytes.TrimSpace(config.ResponseSchema)) == 0 {
			return ref, config, &wire.FieldError{Field: "action_ref", Msg: "the llm_judge action needs config.model and config.response_schema"}
		}
	case actionContainsWords:
	default:
		return ref, config, &wire.FieldError{Field: "action_ref",
			Msg: fmt.Sprintf("config.action_type %q is not an action this server runs; use llm_judge or contains_words", config.ActionType)}
	}
	return ref, config, nil
}

// run computes an action's result on one call, as JSON.
func (a *ActionsAPI) run(ctx context.Context, p auth.Principal, projectID string, config actionConfig, c storage.Call) (json.RawMessage, error) {
	if config.ActionType == actionContainsWords {
		return containsWords(config.TargetWords, c.Output), nil
	}
	if a.llm == nil {
		return nil, &wire.FieldError{Field: "action_ref", Msg: "llm_judge actions need the inference gateway, which this server does not run; " +
			"configure inference.providers and inference.models"}
	}
	request, wrapped, err := judgeRequest(config, c)
	if err != nil {
		return nil, err
	}
	answer, err := a.llm.Complete(ctx, p, projectID, request)
	if err != nil {
		var se interface{ StatusCode() int }
		if errors.As(err, &se) {
			status := se.StatusCode()
			if status/100 == 4 && status != http.StatusTooManyRequests {
				status = http.StatusBadRequest // the action's model or prompt
			}
			return nil, httpapi.Errorf(status, "the llm_judge model "+config.Model+" failed: "+err.Error())
		}
		return nil, err
	}
	return judgeResult(answer, wrapped)
}

// containsWords is whether any target word occurs in the call's output
// as JSON text.
func containsWords(words []string, output json.RawMessage) json.RawMessage {
	text := string(output)
	if len(bytes.TrimSpace(output)) == 0 {
		text = "null"
	}
	for _, w := range words {
		if strings.Contains(text, w) {
			return json.RawMessage("true")
		}
	}
	return json.RawMessage("false")
}

// judgeKey wraps a response schema that is not an object, since
// structured outputs must be objects.
const judgeKey = "response"

// judgeRequest is the chat request of an LLM judge for a call: the
// action's prompt as the system message, the call's inputs and output as
// the user message, and its response schema as the structured output.
// wrapped says the schema was wrapped under judgeKey.
func judgeRequest(config actionConfig, c storage.Call) (json.RawMessage, bool, error) {
	var schemaType struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(config.ResponseSchema, &schemaType) != nil {
		return nil, false, &wire.FieldError{Field: "action_ref", Msg: "config.response_schema must be a JSON Schema object"}
	}
	schema := config.ResponseSchema
	wrapped := schemaType.Type != "object"
	if wrapped {
		schema, _ = json.Marshal(map[string]any{"type": "object", "properties": map[string]json.RawMessage{judgeKey: config.ResponseSchema},
			"additionalProperties": false})
	}
	orNull := func(v json.RawMessage) json.RawMessage {
		if len(bytes.TrimSpace(v)) == 0 {
			return json.RawMessage("null")
		}
		return v
	}
	args, err := json.Marshal(map[string]json.RawMessage{"inputs": orNull(c.Inputs), "output": orNull(c.Output)})
	if err != nil {
		return nil, false, fmt.Errorf("call %s: %w", c.ID, err)
	}
	req, err := json.Marshal(map[string]any{
		"model": config.Model,
		"messages": []map[string]string{{"role": "system", "content": config.Prompt},
			{"role": "user", "content": string(args)}},
		"response_format": map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "response_format", "schema": schema}},
	})
	return req, wrapped, err
}

// judgeResult reads the judge's answer: the first choice's content as
// JSON, unwrapped when the schema was; null when there is no content.
func judgeResult(answer json.RawMessage, wrapped bool) (json.RawMessage, error) {
	var res struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(answer, &res) != nil || len(res.Choices) == 0 || res.Choices[0].Message.Content == nil {
		return json.RawMessage("null"), nil
	}
	content := []byte(*res.Choices[0].Message.Content)
	if !json.Valid(content) {
		return nil, httpapi.Errorf(http.StatusBadGateway, "the llm_judge model answered content that is not JSON")
	}
	if !wrapped {
		return content, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(content, &obj) != nil || obj[judgeKey] == nil {
		return nil, httpapi.Errorf(http.StatusBadGateway, "the llm_judge model's answer lacks the "+judgeKey+" member its schema asks for")
	}
	return obj[judgeKey], nil
}
