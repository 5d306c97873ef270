package upstreamtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// created is the fixed creation time of every answer.
const created = 1700000000

var nextID atomic.Int64

// request is what the server reads from a chat request.
type request struct {
	model        string
	stream       bool
	includeUsage bool
	prompt       string // the last user message's text
	promptWords  int
	tool         string // the first tool's function name, when tools apply
	jsonMode     bool
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func parseRequest(body map[string]json.RawMessage) (*request, error) {
	req := &request{}
	if err := json.Unmarshal(body["model"], &req.model); err != nil {
		return nil, errors.New("model: required string")
	}
	var msgs []message
	if err := json.Unmarshal(body["messages"], &msgs); err != nil || len(msgs) == 0 {
		return nil, errors.New("messages: required non-empty array")
	}
	for _, m := range msgs {
		text := contentText(m.Content)
		req.promptWords += len(strings.Fields(text))
		if m.Role == "user" {
			req.prompt = text
		}
	}
	_ = json.Unmarshal(body["stream"], &req.stream)
	var opts struct {
		IncludeUsage bool `json:"include_usage"`
	}
	_ = json.Unmarshal(body["stream_options"], &opts)
	req.includeUsage = opts.IncludeUsage
	var format struct{ Type string }
	_ = json.Unmarshal(body["response_format"], &format)
	req.jsonMode = format.Type == "json_object" || format.Type == "json_schema"
	req.tool = toolName(body)
	return req, nil
}

// contentText reads a string content or the text parts of a list.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, " ")
}

func toolName(body map[string]json.RawMessage) string {
	var choice string
	if json.Unmarshal(body["tool_choice"], &choice) == nil && choice == "none" {
		return ""
	}
	var tools []struct {
		Function struct{ Name string } `json:"function"`
	}
	if json.Unmarshal(body["tools"], &tools) != nil || len(tools) == 0 {
		return ""
	}
	return tools[0].Function.Name
}

// failStatus reads the status of a fail-NNN model.
func failStatus(model string) (int, bool) {
	code, ok := strings.CutPrefix(model, "fail-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(code)
	return n, err == nil && n >= 400 && n < 600
}

// reply is the answer's text.
func (r *request) reply() string {
	switch {
	case r.model == "judge-garbled":
		return "I think it is fine."
	case strings.Contains(r.model, "judge"):
		good := strings.Contains(r.prompt, "good")
		b, _ := json.Marshal(map[string]any{"verdict": good, "reason": fmt.Sprintf("the text says good: %t", good)})
		return string(b)
	case r.jsonMode:
		b, _ := json.Marshal(map[string]string{"echo": r.prompt})
		return string(b)
	}
	return "echo: " + r.prompt
}

// arguments are the tool call's arguments, a JSON object in a string.
func (r *request) arguments() string {
	b, _ := json.Marshal(map[string]string{"input": r.prompt})
	return string(b)
}

func (r *request) reasoning() *string {
	if !strings.HasPrefix(r.model, "reasoner") {
		return nil
	}
	s := "thinking about " + strconv.Quote(r.prompt)
	return &s
}

// Usage is the token count of an answer: words, not tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (r *request) usage() Usage {
	out := len(strings.Fields(r.reply()))
	if r.tool != "" {
		out = len(strings.Fields(r.arguments()))
	}
	return Usage{PromptTokens: r.promptWords, CompletionTokens: out, TotalTokens: r.promptWords + out}
}

func (r *request) completion() map[string]any {
	msg := map[string]any{"role": "assistant", "content": r.reply()}
	finish := "stop"
	if r.tool != "" {
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": r.tool, "arguments": r.arguments()}}}
		finish = "tool_calls"
	}
	if reasoning := r.reasoning(); reasoning != nil {
		msg["reasoning"] = *reasoning
	}
	return map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", nextID.Add(1)), "object": "chat.completion", "created": created, "model": r.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   r.usage(),
	}
}
