package graphql

import (
	"context"
	"fmt"
)

// Request is a GraphQL request body.
type Request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// Response is a GraphQL response body. Data is absent when the request
// failed before execution (syntax, validation, variables), as the
// specification says; otherwise it holds the selected fields.
type Response struct {
	Data   any      `json:"data,omitempty"`
	Errors []*Error `json:"errors,omitempty"`
}

// Execute parses, validates and runs req against s.
func (s *Schema) Execute(ctx context.Context, req Request) Response {
	doc, err := Parse(req.Query)
	if err != nil {
		return Response{Errors: []*Error{syntaxError(err)}}
	}
	op, e := pickOperation(doc, req.OperationName)
	if e != nil {
		return Response{Errors: []*Error{e}}
	}
	if errs := s.validate(doc, op); len(errs) > 0 {
		return Response{Errors: errs}
	}
	vars, e := coerceVariables(op, req.Variables)
	if e != nil {
		return Response{Errors: []*Error{e}}
	}
	ex := &executor{s: s, doc: doc, vars: vars}
	data := ex.selectionSet(ctx, s.rootType(op.Kind), nil, op.Selection, nil)
	return Response{Data: data, Errors: ex.errs}
}

func syntaxError(err error) *Error {
	if se, ok := err.(*SyntaxError); ok {
		return &Error{Message: se.Error(), Locations: []Location{{Line: se.Line, Column: se.Col}}}
	}
	return &Error{Message: err.Error()}
}

// pickOperation selects the named operation, or the only one.
func pickOperation(doc *Document, name string) (*Operation, *Error) {
	if name == "" {
		if len(doc.Operations) > 1 {
			return nil, &Error{Message: "The document has several operations; name the one to run in operationName."}
		}
		return doc.Operations[0], nil
	}
	for _, op := range doc.Operations {
		if op.Name == name {
			return op, nil
		}
	}
	return nil, &Error{Message: fmt.Sprintf("Unknown operation named %q.", name)}
}

// coerceVariables applies defaults and refuses a missing required
// variable. Values are the JSON-decoded ones the request sent.
func coerceVariables(op *Operation, given map[string]any) (map[string]any, *Error) {
	out := map[string]any{}
	for _, d := range op.Variables {
		v, ok := given[d.Name]
		if !ok && d.HasValue {
			var err error
			if v, err = valueOf(d.Default, nil); err != nil {
				return nil, &Error{Message: err.Error()}
			}
			ok = true
		}
		if d.NonNull && (!ok || v == nil) {
			return nil, &Error{Message: fmt.Sprintf("Variable \"$%s\" of required type %q was not provided.", d.Name, d.Type)}
		}
		if ok {
			out[d.Name] = v
		}
	}
	return out, nil
}

// valueOf turns an input value into its Go form (string, int64, float64,
// bool, nil, []any, map[string]any), reading variables from vars.
func valueOf(v Value, vars map[string]any) (any, error) {
	switch v := v.(type) {
	case Variable:
		return vars[v.Name], nil // declared without a value: null
	case Scalar:
		if e, ok := v.V.(EnumValue); ok {
			return string(e), nil
		}
		return v.V, nil
	case Null:
		return nil, nil
	case List:
		out := make([]any, len(v))
		for i, item := range v {
			x, err := valueOf(item, vars)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case Object:
		return argValues([]Argument(v), vars)
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

func argValues(args []Argument, vars map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for _, a := range args {
		x, err := valueOf(a.Value, vars)
		if err != nil {
			return nil, err
		}
		out[a.Name] = x
	}
	return out, nil
}
