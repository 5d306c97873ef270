package chatstream

import (
	"encoding/json"
	"slices"
	"strings"
)

// completion is the chat.completion shape the assembly renders to.
type completion struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint *string         `json:"system_fingerprint,omitempty"`
	Choices           []choiceOut     `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type choiceOut struct {
	Index        int        `json:"index"`
	Message      messageOut `json:"message"`
	FinishReason *string    `json:"finish_reason"`
}

type messageOut struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	Reasoning        *string       `json:"reasoning,omitempty"`
	ReasoningContent *string       `json:"reasoning_content,omitempty"`
	Refusal          *string       `json:"refusal,omitempty"`
	ToolCalls        []toolCallOut `json:"tool_calls,omitempty"`
}

type toolCallOut struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function functionOut `json:"function"`
}

type functionOut struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func (ch *choiceState) render(index int) choiceOut {
	role := ch.role
	if role == "" {
		role = "assistant"
	}
	msg := messageOut{Role: role, Content: text(ch.content), Reasoning: text(ch.reasoning),
		ReasoningContent: text(ch.reasoningText), Refusal: text(ch.refusal)}
	indexes := make([]int, 0, len(ch.toolCalls))
	for i := range ch.toolCalls {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		tc := ch.toolCalls[i]
		typ := tc.typ
		if typ == "" {
			typ = "function"
		}
		msg.ToolCalls = append(msg.ToolCalls, toolCallOut{ID: tc.id, Type: typ,
			Function: functionOut{Name: tc.name, Arguments: tc.args.String()}})
	}
	return choiceOut{Index: index, Message: msg, FinishReason: ch.finish}
}

func text(b *strings.Builder) *string {
	if b == nil {
		return nil
	}
	s := b.String()
	return &s
}
