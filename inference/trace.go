package inference

import (
	"bytes"
	"encoding/json"
	"strconv"
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
	// cache is cacheHit or cacheMiss when the response cache was asked,
	// under cacheKey; version is the alias version answering (follow.go).
	cache    string
	cacheKey cacheKey
	version  aliasVersion
	rate     admission // standing with the rate limits (ratelimit.go)
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

// summary holds the usage keyed by the catalog model, which is what
// catalog prices are keyed by, with the request count and cached prompt
// tokens in the names cost computation reads. The usage object is the
// upstream's, already parsed as an object: its members are copied as
// they came and the two are appended, unless it names them itself or
// holds escapes, when it is rebuilt member by member.
func (ex *exchange) summary() json.RawMessage {
	if ex.cache == cacheHit {
		return cachedSummary
	}
	if len(ex.usage) == 0 {
		return json.RawMessage("{}")
	}
	var details struct {
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	if decodeJSON(ex.usage, &details) != nil {
		return json.RawMessage("{}")
	}
	cached := details.PromptTokensDetails.CachedTokens
	usage := bytes.TrimSpace(ex.usage)
	if len(usage) < 2 || usage[0] != '{' || bytes.IndexByte(usage, '\\') >= 0 ||
		bytes.Contains(usage, []byte(`"requests"`)) || bytes.Contains(usage, []byte(`"cache_read_input_tokens"`)) {
		return ex.rebuiltSummary(cached)
	}
	b := make([]byte, 0, len(usage)+len(ex.modelID)+80)
	b = append(b, `{"usage":{`...)
	b = appendJSONString(b, ex.modelID)
	b = append(b, ':')
	b = append(b, bytes.TrimSpace(usage[:len(usage)-1])...) // without its closing brace
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, `"requests":1`...)
	if cached > 0 {
		b = strconv.AppendInt(append(b, `,"cache_read_input_tokens":`...), cached, 10)
	}
	return append(b, "}}}"...)
}

// rebuiltSummary is summary for a usage object that names requests or
// cache_read_input_tokens itself (the gateway's values win) or holds
// escapes (whose names may spell either).
func (ex *exchange) rebuiltSummary(cached int64) json.RawMessage {
	entry := map[string]json.RawMessage{}
	if decodeJSON(ex.usage, &entry) != nil {
		return json.RawMessage("{}")
	}
	entry["requests"] = json.RawMessage("1")
	if cached > 0 {
		entry["cache_read_input_tokens"] = strconv.AppendInt(nil, cached, 10)
	}
	b, err := encodeJSON(map[string]any{"usage": map[string]any{ex.modelID: entry}})
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
