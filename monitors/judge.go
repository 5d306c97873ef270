package monitors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
)

// render fills a prompt template with a call's values, as the reference
// formats its scoring prompt: {output} is the call's output, {x} and
// {inputs.x} its input x, {inputs} all of them; a dotted path reads into
// JSON objects. Strings go in as they are, other values as JSON; {{ and
// }} are literal braces. A variable the call does not have is an error,
// as Python's str.format raises.
func render(template string, inputs, output json.RawMessage) (string, error) {
	var b strings.Builder
	for i := 0; i < len(template); i++ {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("the prompt has an unclosed { at byte %d; write {{ for a literal brace", i)
			}
			name := strings.TrimSpace(template[i+1 : i+end])
			v, err := variable(name, inputs, output)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func variable(name string, inputs, output json.RawMessage) (string, error) {
	path := strings.Split(name, ".")
	var root json.RawMessage
	switch path[0] {
	case "output":
		root, path = output, path[1:]
	case "inputs":
		root, path = inputs, path[1:]
	default:
		root = inputs
	}
	v := orNull(root)
	for _, key := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return "", fmt.Errorf("the prompt variable {%s} reads %q of a value that is not an object", name, key)
		}
		next, ok := obj[key]
		if !ok {
			return "", fmt.Errorf("the prompt variable {%s} names %q, which the call does not have", name, key)
		}
		v = orNull(next)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	return string(v), nil
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// request is the chat completion a judge asks for a call.
func (j Judge) request(c storage.Call) (json.RawMessage, error) {
	messages := make([]Message, 0, len(j.Messages)+1)
	for _, m := range j.Messages {
		content, err := render(m.Content, c.Inputs, c.Output)
		if err != nil {
			return nil, err
		}
		messages = append(messages, Message{Role: m.Role, Content: content})
	}
	if j.Prompt != "" {
		content, err := render(j.Prompt, c.Inputs, c.Output)
		if err != nil {
			return nil, err
		}
		messages = append(messages, Message{Role: "user", Content: content})
	}
	req := map[string]any{"model": j.Model, "messages": messages}
	for k, v := range j.Params {
		req[k] = v
	}
	switch {
	case j.Schema != nil:
		req["response_format"] = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "verdict", "schema": j.Schema, "strict": true}}
	case j.Format == "json":
		req["response_format"] = map[string]string{"type": "json_object"}
	}
	return json.Marshal(req)
}

// answer is the part of a chat completion a judge reads.
type answer struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

// verdict reads the judge's answer: its content as JSON (checked against
// the schema when there is one), or as a string for a text judge.
func (j Judge) verdict(a answer) (json.RawMessage, error) {
	if len(a.Choices) == 0 || a.Choices[0].Message.Content == nil {
		return nil, fmt.Errorf("the judge %s answered no message content", j.Model)
	}
	content := strings.TrimSpace(*a.Choices[0].Message.Content)
	if j.Format == "text" {
		return json.Marshal(content)
	}
	content = stripFence(content)
	if !json.Valid([]byte(content)) {
		return nil, fmt.Errorf("unparseable verdict: the judge %s answered text that is not JSON: %.200q", j.Model, content)
	}
	if err := checkSchema(j.Schema, json.RawMessage(content), "verdict"); err != nil {
		return nil, fmt.Errorf("the verdict does not fit the scorer's schema: %w", err)
	}
	return json.RawMessage(content), nil
}

// stripFence removes a Markdown code fence around JSON, which models add
// when they are not held to a schema.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimPrefix(s, "json")
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

// schema is the subset of JSON Schema a verdict is checked against: the
// shapes a judge answers (a boolean, a number in a range, a label, with
// a reason), nested in objects.
type schema struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Enum       []json.RawMessage          `json:"enum"`
	Minimum    *float64                   `json:"minimum"`
	Maximum    *float64                   `json:"maximum"`
}

// checkSchema checks v against raw; at names v in errors.
func checkSchema(raw, v json.RawMessage, at string) error {
	if raw == nil {
		return nil
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s: the schema is not an object", at)
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if jsonEqual(e, v) {
				return nil
			}
		}
		return fmt.Errorf("%s is %s, not one of the schema's labels", at, v)
	}
	switch s.Type {
	case "boolean":
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return fmt.Errorf("%s is %s, not a boolean", at, v)
		}
	case "string":
		var str string
		if json.Unmarshal(v, &str) != nil {
			return fmt.Errorf("%s is %s, not a string", at, v)
		}
	case "number", "integer":
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return fmt.Errorf("%s is %s, not a number", at, v)
		}
		if (s.Minimum != nil && f < *s.Minimum) || (s.Maximum != nil && f > *s.Maximum) {
			return fmt.Errorf("%s is %v, outside the schema's range", at, f)
		}
	case "object":
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil || obj == nil {
			return fmt.Errorf("%s is %.100s, not an object", at, v)
		}
		for _, k := range s.Required {
			if _, ok := obj[k]; !ok {
				return fmt.Errorf("%s has no %q", at, k)
			}
		}
		for k, sub := range s.Properties {
			if val, ok := obj[k]; ok {
				if err := checkSchema(sub, val, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
