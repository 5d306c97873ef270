package inference

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/storage"
)

// Op names of traced calls: the Weave OpenAI integration's, for requests
// to /v1, and the trace server's own, for /completions/create.
const (
	opChatCompletions = "openai.chat.completions.create"
	opWeaveCompletion = "weave.completions_create"
)

// exchange is one proxied request: what was asked, where it went and what
// came back. It becomes the traced call.
type exchange struct {
	opName            string
	endpoint          string
	project, userID   string
	callID, traceID   string
	parentID          string
	started           time.Time
	modelID           string          // as the client sent it
	inputs            json.RawMessage // the request as sent
	stream            bool
	untraced          bool // refused before any work (concurrency limit)
	attempts          []attempt
	served            *catalog.Upstream
	firstByte         time.Duration
	status            int
	output, usage     json.RawMessage
	exception         string
	truncatedOutput   bool
	clientClosedEarly bool
}

// attempt is one try of one upstream, as the trace shows it.
type attempt struct {
	Provider   string  `json:"provider"`
	Model      string  `json:"model"`
	Status     int     `json:"status,omitempty"`
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

func newExchange(op, endpoint, project, userID string, started time.Time) *exchange {
	return &exchange{opName: op, endpoint: endpoint, project: project, userID: userID, started: started,
		callID: newID(), traceID: newID(), status: 200}
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// fail records an error answer; the first exception stands.
func (ex *exchange) fail(e *apiError) {
	ex.status = e.status
	if ex.exception == "" {
		ex.exception = e.message
	}
}

// call renders the exchange as one complete Weave call.
func (ex *exchange) call(ended time.Time) storage.Call {
	c := storage.Call{
		ProjectID: ex.project, ID: ex.callID, TraceID: ex.traceID, ParentID: ex.parentID, OpName: ex.opName,
		StartedAt: ex.started.UTC(), EndedAt: ptr(ended.UTC()), WBUserID: ex.userID,
		Inputs: ex.inputs, Output: ex.output, Attributes: ex.attributes(), Summary: ex.summary(),
	}
	if len(c.Inputs) == 0 {
		c.Inputs = json.RawMessage("{}")
	}
	if ex.exception != "" {
		c.Exception = &ex.exception
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func (ex *exchange) attributes() json.RawMessage {
	a := map[string]any{"endpoint": ex.endpoint, "stream": ex.stream, "status_code": ex.status, "model": ex.modelID}
	if ex.served != nil {
		a["provider"], a["upstream_model"] = ex.served.Provider.Name, ex.served.Model
	}
	if len(ex.attempts) > 0 {
		a["attempts"] = ex.attempts
	}
	if ex.firstByte > 0 {
		a["time_to_first_token_ms"] = float64(ex.firstByte.Microseconds()) / 1000
	}
	if ex.truncatedOutput {
		a["output_truncated"] = true
	}
	if ex.clientClosedEarly {
		a["client_closed"] = true
	}
	b, _ := json.Marshal(map[string]any{"inference": a}) // plain values: cannot fail
	return b
}

// summary holds the usage keyed by the catalog model, which is what
// catalog prices are keyed by, with the request count and cached prompt
// tokens in the names cost computation reads.
func (ex *exchange) summary() json.RawMessage {
	if len(ex.usage) == 0 {
		return json.RawMessage("{}")
	}
	entry := map[string]json.RawMessage{}
	if json.Unmarshal(ex.usage, &entry) != nil {
		return json.RawMessage("{}")
	}
	entry["requests"] = json.RawMessage("1")
	var details struct {
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	if json.Unmarshal(ex.usage, &details) == nil && details.PromptTokensDetails.CachedTokens > 0 {
		entry["cache_read_input_tokens"], _ = json.Marshal(details.PromptTokensDetails.CachedTokens)
	}
	b, err := json.Marshal(map[string]any{"usage": map[string]any{ex.modelID: entry}})
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
