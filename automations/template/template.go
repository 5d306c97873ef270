// Package template parses and renders webhook payload templates: text,
// usually JSON, holding variables written ${name} or $NAME. A value that
// stands inside a JSON string is inserted JSON-escaped; one that stands
// where a JSON value goes is inserted as JSON (a string quoted, a number
// or object as it is). So a template that is valid JSON renders to valid
// JSON whatever the values hold. $$ writes a literal $.
//
// It knows nothing of automations, events or secrets: callers say which
// names exist and what they hold. It imports nothing of the project.
package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MaxBytes is the largest template Parse accepts.
const MaxBytes = 64 << 10

// Template is a parsed payload template.
type Template struct {
	parts []part
}

// part is literal text or one variable.
type part struct {
	text     string // literal text; "" for a variable
	name     string // variable name; "" for literal text
	inString bool   // the variable stands inside a JSON string
	offset   int    // byte offset of the variable in the source
}

// SyntaxError is a template that cannot be parsed.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// UnknownVariableError names the variables no value exists for.
type UnknownVariableError struct {
	Names []string
}

func (e *UnknownVariableError) Error() string {
	return "unknown variable " + strings.Join(e.Names, ", ") + "; write $$ for a literal $"
}

// Parse reads a template.
func Parse(src string) (*Template, error) {
	if len(src) > MaxBytes {
		return nil, &SyntaxError{Offset: MaxBytes, Msg: fmt.Sprintf("template is %d bytes, above the %d-byte limit", len(src), MaxBytes)}
	}
	p := parser{src: src}
	if err := p.run(); err != nil {
		return nil, err
	}
	return &Template{parts: p.parts}, nil
}

// Names lists the template's variables in order of first use, each once.
func (t *Template) Names() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.name != "" && !seen[p.name] {
			seen[p.name] = true
			out = append(out, p.name)
		}
	}
	return out
}

// Check refuses variables known does not accept, naming each as written.
func (t *Template) Check(known func(name string) bool) error {
	var unknown []string
	for _, name := range t.Names() {
		if !known(name) {
			unknown = append(unknown, "${"+name+"}")
		}
	}
	if len(unknown) > 0 {
		return &UnknownVariableError{Names: unknown}
	}
	return nil
}

// Lookup returns a variable's value as JSON (a string value quoted).
type Lookup func(name string) (json.RawMessage, bool)

// Render fills in the variables. A variable lookup does not know is an
// *UnknownVariableError; output above maxBytes (when positive) is an error.
func (t *Template) Render(lookup Lookup, maxBytes int) ([]byte, error) {
	var out bytes.Buffer
	var unknown []string
	for _, p := range t.parts {
		if p.name == "" {
			out.WriteString(p.text)
			continue
		}
		v, ok := lookup(p.name)
		if !ok {
			unknown = append(unknown, "${"+p.name+"}")
			continue
		}
		if err := writeValue(&out, v, p.inString); err != nil {
			return nil, fmt.Errorf("variable %s: %w", p.name, err)
		}
		if maxBytes > 0 && out.Len() > maxBytes {
			return nil, fmt.Errorf("rendered payload exceeds %d bytes", maxBytes)
		}
	}
	if len(unknown) > 0 {
		return nil, &UnknownVariableError{Names: unknown}
	}
	if maxBytes > 0 && out.Len() > maxBytes {
		return nil, fmt.Errorf("rendered payload exceeds %d bytes", maxBytes)
	}
	return out.Bytes(), nil
}

// writeValue inserts v: as string content (escaped, without quotes)
// inside a JSON string, as compact JSON elsewhere.
func writeValue(out *bytes.Buffer, v json.RawMessage, inString bool) error {
	if !json.Valid(v) {
		return fmt.Errorf("value is not JSON")
	}
	if !inString {
		return json.Compact(out, v)
	}
	s := compactText(v) // a number, object, null...: its JSON text, escaped
	if trimmed := bytes.TrimSpace(v); trimmed[0] == '"' {
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return err
		}
	}
	quoted := String(s)
	out.Write(quoted[1 : len(quoted)-1])
	return nil
}

func compactText(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}

// String is s as a JSON string value, without HTML escaping (receivers
// read the payload as JSON, never as HTML).
func String(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
