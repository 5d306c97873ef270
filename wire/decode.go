package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// FieldError is a bad request body: Field names the offending key (dotted
// path). Unknown says it was an unrecognised top-level key, and Schema
// names how else the body does not fit the request's schema (a missing
// field, a wrong type, no JSON at all), with pydantic's error type; the
// reference server's request validation answers both with HTTP 422.
// Other field errors are bad values the endpoint's own rules refuse
// (HTTP 400).
type FieldError struct {
	Field   string
	Msg     string
	Unknown bool
	Schema  string
}

// Schema error types, as pydantic names them in a 422's detail.
const (
	SchemaMissing  = "missing"
	SchemaJSON     = "json_invalid"
	SchemaType     = "type_error"
	SchemaDict     = "dict_type"
	SchemaLiteral  = "literal_error"
	SchemaExtra    = "extra_forbidden"
	SchemaDatetime = "datetime_parsing"
)

// Missing is the error of a required field that is absent or null; hint,
// if any, says what to send.
func Missing(field, hint string) *FieldError {
	msg := "field required"
	if hint != "" {
		msg += hint
	}
	return &FieldError{Field: field, Msg: msg, Schema: SchemaMissing}
}

// NotObject is the error of a field that must hold a JSON object.
func NotObject(field string) *FieldError {
	return &FieldError{Field: field, Msg: "must be a JSON object", Schema: SchemaDict}
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Fields maps each allowed top-level key to the pointer it decodes into.
type Fields map[string]any

// DecodeTop decodes a JSON object body strictly at the top level (unknown
// keys are rejected, as the reference server's strict models do) while
// nested payloads ignore unknown keys, as newer clients add fields. Explicit
// nulls leave the target at its default. Required keys must be present and
// not null.
func DecodeTop(body []byte, fields Fields, required ...string) error {
	raw, err := splitTop(body)
	if err != nil {
		// Slow path, only for malformed bodies: encoding/json says what
		// is wrong and where.
		var std map[string]json.RawMessage
		if err := json.Unmarshal(body, &std); err != nil {
			return bodyError(err)
		}
		return &FieldError{Msg: "request body must be a JSON object", Schema: SchemaDict}
	}
	for key, val := range raw {
		target, ok := fields[key]
		if !ok {
			return &FieldError{Field: key, Unknown: true, Schema: SchemaExtra, Msg: "unknown field; allowed: " + allowed(fields)}
		}
		if len(val) == 0 {
			return &FieldError{Field: key, Msg: "missing value", Schema: SchemaJSON}
		}
		if bytes.Equal(val, []byte("null")) {
			continue
		}
		if err := decodeValue(val, target); err != nil {
			return valueError(key, err)
		}
	}
	for _, key := range required {
		if v, ok := raw[key]; !ok || bytes.Equal(v, []byte("null")) {
			return Missing(key, "")
		}
	}
	return nil
}

// decodeValue is json.Unmarshal with encoding/json/v2's decoder under
// v1's semantics (go-json-experiment's v1 package): encoding/json took a
// third of the server's CPU under /call/upsert_batch, validating each
// value in a pass of its own before decoding it, and this takes half as
// long. A value it refuses is decoded again by encoding/json, whose
// errors the field errors are made from.
func decodeValue(val []byte, target any) error {
	if jsonv1.Unmarshal(val, target) == nil {
		return nil
	}
	return json.Unmarshal(val, target)
}

func allowed(fields Fields) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func bodyError(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return &FieldError{Msg: fmt.Sprintf("request body is not valid JSON (offset %d): %v", syn.Offset, err), Schema: SchemaJSON}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return &FieldError{Msg: "request body must be a JSON object", Schema: SchemaDict}
	}
	return &FieldError{Msg: "request body is not valid JSON: " + err.Error(), Schema: SchemaJSON}
}

func valueError(key string, err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := key
		if typ.Field != "" {
			field = key + "." + typ.Field
		}
		if typ.Type == reflect.TypeFor[Time]() {
			return &FieldError{Field: field, Msg: "expected an ISO-8601 datetime such as 2025-01-02T03:04:05.123Z, got " + typ.Value, Schema: SchemaDatetime}
		}
		return &FieldError{Field: field, Msg: fmt.Sprintf("expected %s, got JSON %s", typ.Type, typ.Value), Schema: SchemaType}
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.Field = joinField(key, fe.Field)
		if fe.Schema == "" {
			fe.Schema = SchemaType // a value its type cannot hold
		}
		return fe
	}
	return &FieldError{Field: key, Msg: err.Error(), Schema: SchemaType}
}

func joinField(a, b string) string {
	if b == "" {
		return a
	}
	return a + "." + b
}
