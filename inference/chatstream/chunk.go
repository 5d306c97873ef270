// Package chatstream reads OpenAI chat.completion.chunk payloads and
// assembles a stream of them into the chat.completion the same request
// would have returned unstreamed: per choice the role, content, reasoning
// (both spellings servers use), refusal, tool calls and finish reason, and
// the stream's usage. The assembly is bounded in bytes; what does not fit
// is left out and reported.
//
// It imports nothing of Weft.
package chatstream

import (
	"bytes"
	"encoding/json"
	"errors"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Chunk is the part of a chat.completion.chunk the gateway reads.
type Chunk struct {
	ID                string          `json:"id"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []Choice        `json:"choices"`
	Usage             json.RawMessage `json:"usage"`
	Error             json.RawMessage `json:"error"`
}

// Choice is one choice's delta.
type Choice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is what one chunk adds to a choice's message.
type Delta struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
	// Reasoning is vLLM's current name for reasoning text;
	// ReasoningContent the older one. Both are kept as they came.
	Reasoning        *string         `json:"reasoning"`
	ReasoningContent *string         `json:"reasoning_content"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []ToolCallDelta `json:"tool_calls"`
}

// ToolCallDelta is a fragment of one tool call, keyed by Index.
type ToolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ErrNotChunk means a data payload is not a JSON object.
var ErrNotChunk = errors.New("stream payload is not a JSON object")

// Parse reads one data payload. Every event of every stream passes here,
// so it decodes with encoding/json/v2's implementation under v1's
// semantics (case-insensitive names, last duplicate wins, invalid UTF-8
// replaced): the same result at less than half encoding/json's cost.
func Parse(data []byte) (*Chunk, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, ErrNotChunk
	}
	var c Chunk
	if err := jsonv1.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// HasUsage reports a usage object on the chunk (null and non-objects,
// which some servers put on every chunk, do not count).
func (c *Chunk) HasUsage() bool {
	u := bytes.TrimSpace(c.Usage)
	return len(u) > 0 && u[0] == '{'
}

// UsageOnly reports the chunk a server sends for stream_options
// include_usage: usage and no choices.
func (c *Chunk) UsageOnly() bool { return c.HasUsage() && len(c.Choices) == 0 }

// ErrorMessage returns the message of an error payload: error.message
// when error is an object, the error itself when it is a string.
func (c *Chunk) ErrorMessage() (string, bool) {
	if !present(c.Error) {
		return "", false
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(c.Error, &obj) == nil && obj.Message != "" {
		return obj.Message, true
	}
	var s string
	if json.Unmarshal(c.Error, &s) == nil && s != "" {
		return s, true
	}
	return string(c.Error), true
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}
