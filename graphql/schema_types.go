package graphql

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Schema is the set of object types a request is checked and executed
// against. Scalars are not declared: a field with an empty Type returns a
// JSON scalar (string, number, boolean or null) and takes no selection.
type Schema struct {
	Types    map[string]*Type
	Query    string // name of the query root type
	Mutation string // name of the mutation root type; "" for none
}

// Type is an object type.
type Type struct {
	Name   string
	Fields map[string]FieldDef
	// Hint is added to the error for a field the type does not have.
	Hint string
}

// FieldDef is one field of an object type.
type FieldDef struct {
	// Type names the object type the field returns; "" for a scalar.
	Type string
	// Args are the argument names the field takes.
	Args []string
	// Resolve computes the field from its parent's value (nil for a root
	// field) and its arguments, variables substituted. A nil result is
	// null. Object fields return the value the child fields resolve from.
	Resolve func(ctx context.Context, parent any, args map[string]any) (any, error)
}

// Error is one entry of a response's errors list.
type Error struct {
	Message   string     `json:"message"`
	Locations []Location `json:"locations,omitempty"`
	Path      []any      `json:"path,omitempty"`
}

// Location is a 1-based line and column in the document.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func (e *Error) Error() string { return e.Message }

// errorf makes an Error located at a field.
func errorf(f *Field, format string, args ...any) *Error {
	e := &Error{Message: fmt.Sprintf(format, args...)}
	if f != nil {
		e.Locations = []Location{{Line: f.Line, Column: f.Col}}
	}
	return e
}

func (t *Type) fieldNames() string {
	names := make([]string, 0, len(t.Fields))
	for n := range t.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// orderedMap is a JSON object that keeps the order fields were selected
// in, as GraphQL responses do.
type orderedMap struct {
	keys []string
	vals map[string]any
}

func newOrderedMap() *orderedMap { return &orderedMap{vals: map[string]any{}} }

func (m *orderedMap) set(k string, v any) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// MarshalJSON writes the fields in selection order.
func (m *orderedMap) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, k := range m.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(m.vals[k])
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, kb...), ':'), vb...)
	}
	return append(buf, '}'), nil
}
