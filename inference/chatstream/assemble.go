package chatstream

import (
	"encoding/json"
	"slices"
	"strings"
)

// entryCost is what a new choice or tool call counts against the bound,
// so a stream of distinct indexes cannot grow the assembly for free.
const entryCost = 64

// Assembler folds chunks into one chat.completion.
type Assembler struct {
	max       int
	size      int
	truncated bool

	id, model, fingerprint string
	created                int64
	choices                map[int]*choiceState
	usage                  json.RawMessage
}

type choiceState struct {
	role                                       string
	content, reasoning, reasoningText, refusal *strings.Builder
	toolCalls                                  map[int]*toolCallState
	finish                                     *string
}

type toolCallState struct {
	id, typ, name string
	args          strings.Builder
}

// NewAssembler bounds the assembled text at maxBytes.
func NewAssembler(maxBytes int) *Assembler {
	return &Assembler{max: maxBytes, choices: map[int]*choiceState{}}
}

// Add folds one chunk in.
func (a *Assembler) Add(c *Chunk) {
	if a.id == "" {
		a.id, a.model, a.created = c.ID, c.Model, c.Created
	}
	if c.SystemFingerprint != "" {
		a.fingerprint = c.SystemFingerprint
	}
	if c.HasUsage() && a.fits(len(c.Usage)) {
		a.usage = append(json.RawMessage(nil), c.Usage...)
	}
	for i := range c.Choices {
		a.addChoice(&c.Choices[i])
	}
}

func (a *Assembler) addChoice(d *Choice) {
	ch, ok := a.choices[d.Index]
	if !ok {
		if !a.fits(entryCost) {
			return
		}
		ch = &choiceState{}
		a.choices[d.Index] = ch
	}
	if d.Delta.Role != "" {
		ch.role = d.Delta.Role
	}
	if d.FinishReason != nil {
		ch.finish = d.FinishReason
	}
	a.appendText(&ch.content, d.Delta.Content)
	a.appendText(&ch.reasoning, d.Delta.Reasoning)
	a.appendText(&ch.reasoningText, d.Delta.ReasoningContent)
	a.appendText(&ch.refusal, d.Delta.Refusal)
	for i := range d.Delta.ToolCalls {
		a.addToolCall(ch, &d.Delta.ToolCalls[i])
	}
}

func (a *Assembler) addToolCall(ch *choiceState, d *ToolCallDelta) {
	if ch.toolCalls == nil {
		ch.toolCalls = map[int]*toolCallState{}
	}
	tc, ok := ch.toolCalls[d.Index]
	if !ok {
		if !a.fits(entryCost) {
			return
		}
		tc = &toolCallState{}
		ch.toolCalls[d.Index] = tc
	}
	if d.ID != "" && a.fits(len(d.ID)) {
		tc.id = d.ID
	}
	if d.Type != "" && a.fits(len(d.Type)) {
		tc.typ = d.Type
	}
	if d.Function.Name != "" && a.fits(len(d.Function.Name)) {
		tc.name += d.Function.Name
	}
	if a.fits(len(d.Function.Arguments)) {
		tc.args.WriteString(d.Function.Arguments)
	}
}

// appendText adds a fragment to a field; a fragment that is present but
// empty still makes the field present.
func (a *Assembler) appendText(dst **strings.Builder, frag *string) {
	if frag == nil {
		return
	}
	if *dst == nil {
		*dst = &strings.Builder{}
	}
	if a.fits(len(*frag)) {
		(*dst).WriteString(*frag)
	}
}

// fits reserves n bytes of the bound, or marks the assembly truncated.
func (a *Assembler) fits(n int) bool {
	if a.size+n > a.max {
		a.truncated = true
		return false
	}
	a.size += n
	return true
}

// Usage is the last usage object the stream carried, nil if none.
func (a *Assembler) Usage() json.RawMessage { return a.usage }

// Truncated reports that something did not fit the bound.
func (a *Assembler) Truncated() bool { return a.truncated }

// Completion renders the chat.completion the chunks add up to.
func (a *Assembler) Completion() json.RawMessage {
	out := completion{ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model, Choices: []choiceOut{}}
	if a.fingerprint != "" {
		out.SystemFingerprint = &a.fingerprint
	}
	if a.usage != nil {
		out.Usage = a.usage
	}
	indexes := make([]int, 0, len(a.choices))
	for i := range a.choices {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		out.Choices = append(out.Choices, a.choices[i].render(i))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil // unreachable: strings and raw usage that parsed as an object
	}
	return b
}
