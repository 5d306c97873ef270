package inference

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/auth"
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
	principal         auth.Principal // who asked: resolves checkpoints
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

// inferenceAttributes is attributes.inference of a traced call.
type inferenceAttributes struct {
	Endpoint        string    `json:"endpoint"`
	Model           string    `json:"model"`
	Stream          bool      `json:"stream"`
	StatusCode      int       `json:"status_code"`
	Provider        string    `json:"provider,omitempty"`
	UpstreamModel   string    `json:"upstream_model,omitempty"`
	Attempts        []attempt `json:"attempts,omitempty"`
	TTFTMillis      float64   `json:"time_to_first_token_ms,omitempty"`
	OutputTruncated bool      `json:"output_truncated,omitempty"`
	ClientClosed    bool      `json:"client_closed,omitempty"`
}

func (ex *exchange) attributes() json.RawMessage {
	a := inferenceAttributes{Endpoint: ex.endpoint, Model: ex.modelID, Stream: ex.stream, StatusCode: ex.status,
		Attempts: ex.attempts, TTFTMillis: float64(ex.firstByte.Microseconds()) / 1000,
		OutputTruncated: ex.truncatedOutput, ClientClosed: ex.clientClosedEarly}
	if ex.served != nil {
		a.Provider, a.UpstreamModel = ex.served.Provider.Name, ex.served.Model
	}
	b, _ := json.Marshal(struct {
		Inference inferenceAttributes `json:"inference"`
	}{a}) // plain values: cannot fail
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
