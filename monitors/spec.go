package monitors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/refs"
)

// The object classes monitors read, as the Weave SDK names them.
const (
	MonitorClass = "Monitor"
	JudgeClass   = "LLMAsAJudgeScorer"
)

// Monitor is one live Monitor object version: which calls it scores, how
// many of them, with which scorers, within what daily spend.
type Monitor struct {
	ProjectID string
	Name      string // the object id
	Ref       string // the version's ref
	// SamplingRate is the share of matching calls scored, in [0, 1].
	SamplingRate float64
	Scorers      []string // scorer refs
	// OpNames are op refs as the calls filter takes them; a plain name
	// stays (OpenTelemetry spans' op names are plain) and adds the ref
	// of its every version (the SDKs' op names are refs). Empty matches
	// every op.
	OpNames []string
	// Query is the monitor's calls query, nil for none.
	Query  json.RawMessage
	Active bool
	// DailyCapUSD bounds what the monitor's judges spend per UTC day;
	// nil uses the configured default.
	DailyCapUSD *float64
	// UserID is who published the version; judges run on their behalf.
	UserID string
}

// monitorVal is the stored value of a Monitor object.
type monitorVal struct {
	SamplingRate *float64        `json:"sampling_rate"`
	Scorers      []string        `json:"scorers"`
	OpNames      []string        `json:"op_names"`
	Query        json.RawMessage `json:"query"`
	Active       bool            `json:"active"`
	DailyCapUSD  *float64        `json:"daily_spend_cap_usd"`
	// CallFilter is the older SDKs' spelling of op_names and query.
	CallFilter *struct {
		OpNames []string        `json:"op_names"`
		Query   json.RawMessage `json:"query"`
	} `json:"call_filter"`
}

// ParseMonitor reads a Monitor object version of projectID.
func ParseMonitor(projectID, objectID, digest string, val json.RawMessage) (Monitor, error) {
	var v monitorVal
	if err := json.Unmarshal(val, &v); err != nil {
		return Monitor{}, fmt.Errorf("monitor %s: the value is not a Monitor object: %w", objectID, err)
	}
	m := Monitor{ProjectID: projectID, Name: objectID, Ref: "weave:///" + projectID + "/object/" + objectID + ":" + digest,
		SamplingRate: 1, Scorers: v.Scorers, Active: v.Active, DailyCapUSD: v.DailyCapUSD, Query: v.Query}
	opNames := v.OpNames
	if v.CallFilter != nil {
		opNames = append(opNames, v.CallFilter.OpNames...)
		if isNull(m.Query) {
			m.Query = v.CallFilter.Query
		}
	}
	if isNull(m.Query) {
		m.Query = nil
	}
	if v.SamplingRate != nil {
		m.SamplingRate = *v.SamplingRate
	}
	if m.SamplingRate < 0 || m.SamplingRate > 1 {
		return m, fmt.Errorf("monitor %s: sampling_rate %v is outside [0, 1]", objectID, m.SamplingRate)
	}
	if m.DailyCapUSD != nil && *m.DailyCapUSD < 0 {
		return m, fmt.Errorf("monitor %s: daily_spend_cap_usd %v is negative", objectID, *m.DailyCapUSD)
	}
	for _, s := range m.Scorers {
		r, err := refs.Parse(s)
		if err != nil || r.Kind != refs.KindObject || r.ProjectID != projectID {
			return m, fmt.Errorf("monitor %s: scorer %q is not an object ref of project %s", objectID, s, projectID)
		}
	}
	for _, name := range opNames {
		if !refs.IsRef(name) {
			m.OpNames = append(m.OpNames, name)
		}
		m.OpNames = append(m.OpNames, opRef(projectID, name))
	}
	return m, nil
}

// opRef is an op name as the calls filter takes it: a ref, or the ref of
// every version of a plain name.
func opRef(projectID, name string) string {
	if refs.IsRef(name) {
		return name
	}
	return "weave:///" + projectID + "/op/" + name + ":*"
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// Judge is one LLMAsAJudgeScorer version: the prompt it renders for a
// call, the catalog model that answers, and the verdict's shape.
type Judge struct {
	Ref  string
	Name string
	// Model is the gateway catalog's model id (llm_model_id).
	Model string
	// Prompt is the scoring prompt; Messages the model's message
	// template, sent before it. Both take {output}, {inputs.x} and {x}.
	Prompt   string
	Messages []Message
	// Params are the model's other default parameters, sent as they are
	// (temperature, max_tokens, ...).
	Params map[string]json.RawMessage
	// Format is "json" or "text"; Schema the verdict's JSON schema, nil
	// for none.
	Format string
	Schema json.RawMessage
}

// Message is one templated chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// judgeVal is the stored value of an LLMAsAJudgeScorer: its model is the
// LLMStructuredCompletionModel, inline or as a ref.
type judgeVal struct {
	ClassName     string          `json:"_class_name"`
	Name          string          `json:"name"`
	ScoringPrompt *string         `json:"scoring_prompt"`
	PromptRef     json.RawMessage `json:"scoring_prompt_ref"`
	Model         json.RawMessage `json:"model"`
}

type modelVal struct {
	LLMModelID    string                     `json:"llm_model_id"`
	DefaultParams map[string]json.RawMessage `json:"default_params"`
}

// ModelReader resolves the ref of a scorer's model object to its value.
type ModelReader func(ref string) (json.RawMessage, error)

// ParseJudge reads an LLM-as-judge scorer version whose ref is ref;
// readModel resolves its model when it is stored as a ref.
func ParseJudge(ref string, val json.RawMessage, readModel ModelReader) (Judge, error) {
	var v judgeVal
	if err := json.Unmarshal(val, &v); err != nil {
		return Judge{}, fmt.Errorf("scorer %s is not an object: %w", ref, err)
	}
	if v.ClassName != JudgeClass {
		return Judge{}, fmt.Errorf("scorer %s is a %q; only %s scorers run on the server (other scorers run in the SDK, with call.apply_scorer)",
			ref, v.ClassName, JudgeClass)
	}
	if !isNull(v.PromptRef) {
		return Judge{}, fmt.Errorf("scorer %s names its prompt by scoring_prompt_ref, which the server does not resolve; set scoring_prompt", ref)
	}
	j := Judge{Ref: ref, Name: v.Name, Format: "json"}
	if v.ScoringPrompt != nil {
		j.Prompt = *v.ScoringPrompt
	}
	if j.Name == "" {
		if r, err := refs.Parse(ref); err == nil {
			j.Name = r.Name
		}
	}
	raw := v.Model
	var asRef string
	if json.Unmarshal(raw, &asRef) == nil {
		if readModel == nil {
			return j, fmt.Errorf("scorer %s: its model %s cannot be read", ref, asRef)
		}
		var err error
		if raw, err = readModel(asRef); err != nil {
			return j, fmt.Errorf("scorer %s: reading its model %s: %w", ref, asRef, err)
		}
	}
	var m modelVal
	if err := json.Unmarshal(raw, &m); err != nil || m.LLMModelID == "" {
		return j, fmt.Errorf("scorer %s: its model has no llm_model_id; name a model of the gateway's catalog", ref)
	}
	j.Model = m.LLMModelID
	if err := j.readParams(m.DefaultParams); err != nil {
		return j, fmt.Errorf("scorer %s: %w", ref, err)
	}
	if j.Prompt == "" && len(j.Messages) == 0 {
		return j, fmt.Errorf("scorer %s has neither scoring_prompt nor a messages_template", ref)
	}
	return j, nil
}

// sentParams are the model parameters a judge request carries as they
// are stored; the others are read into Judge or ignored.
var sentParams = []string{"temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty", "stop", "seed"}

func (j *Judge) readParams(params map[string]json.RawMessage) error {
	j.Params = map[string]json.RawMessage{}
	for _, k := range sentParams {
		if v, ok := params[k]; ok && !isNull(v) {
			j.Params[k] = v
		}
	}
	if raw, ok := params["messages_template"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &j.Messages); err != nil {
			return fmt.Errorf("default_params.messages_template must be a list of {role, content} with text content: %w", err)
		}
	}
	if raw, ok := params["response_format"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &j.Format); err != nil {
			return fmt.Errorf("default_params.response_format must be \"json\" or \"text\"")
		}
	}
	j.Format = strings.ToLower(j.Format)
	if j.Format != "json" && j.Format != "text" && j.Format != "json_schema" {
		return fmt.Errorf("default_params.response_format %q is not json or text", j.Format)
	}
	if raw, ok := params["response_format_schema"]; ok && !isNull(raw) {
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(raw, &schema); err != nil {
			return fmt.Errorf("default_params.response_format_schema must be a JSON Schema object")
		}
		j.Schema, j.Format = raw, "json"
	}
	if j.Format == "json_schema" {
		j.Format = "json"
	}
	return nil
}
