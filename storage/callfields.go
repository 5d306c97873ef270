package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// CallSide says which writes of a call carry a field.
type CallSide uint8

const (
	// SideKey fields name the call; every part carries them.
	SideKey CallSide = iota + 1
	// SideStart fields come with a start part (PartStart).
	SideStart
	// SideEnd fields come with an end part (PartEnd).
	SideEnd
	// SideDelete fields are set by deletes (CallDelete), not by parts.
	SideDelete
)

// CallField is one field of a stored call: its column in every backend,
// the side of the call that carries it, and where it lives in a Call.
// Of returns a pointer to the field, one of *string, *time.Time,
// **time.Time, *json.RawMessage, **string, **int64 or *[]string; the
// field's kind is its pointer's type.
type CallField struct {
	Column string
	Side   CallSide
	Of     func(c *Call) any
}

// CallFields are the fields of Call, in the order the write-ahead log
// encodes them (changing the order changes that format). The merge of
// parts (FoldPart), the log codec and its size estimate, and each
// backend's columns are derived from this table: a new field of Call is
// one line here, and a test fails while a field of Call is missing.
var CallFields = []CallField{
	{"project_id", SideKey, func(c *Call) any { return &c.ProjectID }},
	{"id", SideKey, func(c *Call) any { return &c.ID }},
	{"trace_id", SideStart, func(c *Call) any { return &c.TraceID }},
	{"parent_id", SideStart, func(c *Call) any { return &c.ParentID }},
	{"thread_id", SideStart, func(c *Call) any { return &c.ThreadID }},
	{"turn_id", SideStart, func(c *Call) any { return &c.TurnID }},
	{"op_name", SideStart, func(c *Call) any { return &c.OpName }},
	{"display_name", SideStart, func(c *Call) any { return &c.DisplayName }},
	{"wb_user_id", SideStart, func(c *Call) any { return &c.WBUserID }},
	{"wb_run_id", SideStart, func(c *Call) any { return &c.WBRunID }},
	{"started_at", SideStart, func(c *Call) any { return &c.StartedAt }},
	{"ended_at", SideEnd, func(c *Call) any { return &c.EndedAt }},
	{"deleted_at", SideDelete, func(c *Call) any { return &c.DeletedAt }},
	{"attributes", SideStart, func(c *Call) any { return &c.Attributes }},
	{"inputs", SideStart, func(c *Call) any { return &c.Inputs }},
	{"output", SideEnd, func(c *Call) any { return &c.Output }},
	{"summary", SideEnd, func(c *Call) any { return &c.Summary }},
	{"otel_dump", SideStart, func(c *Call) any { return &c.OtelDump }},
	{"exception", SideEnd, func(c *Call) any { return &c.Exception }},
	{"wb_run_step", SideStart, func(c *Call) any { return &c.WBRunStep }},
	{"wb_run_step_end", SideEnd, func(c *Call) any { return &c.WBRunStepEnd }},
	{"input_refs", SideStart, func(c *Call) any { return &c.InputRefs }},
	{"output_refs", SideEnd, func(c *Call) any { return &c.OutputRefs }},
}

// CallColumns returns the columns of the fields of the given sides, in
// CallFields order.
func CallColumns(sides ...CallSide) []string {
	fields := CallFieldsOf(sides...)
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Column
	}
	return cols
}

// CallFieldsOf returns the fields of the given sides, in CallFields order.
func CallFieldsOf(sides ...CallSide) []CallField {
	var out []CallField
	for _, f := range CallFields {
		if slices.Contains(sides, f.Side) {
			out = append(out, f)
		}
	}
	return out
}

// copyField sets the field dst points to to the one src points to; both
// come from the same CallField.
func copyField(dst, src any) {
	switch d := dst.(type) {
	case *string:
		*d = *src.(*string)
	case *time.Time:
		*d = *src.(*time.Time)
	case **time.Time:
		*d = *src.(**time.Time)
	case *json.RawMessage:
		*d = *src.(*json.RawMessage)
	case **string:
		*d = *src.(**string)
	case **int64:
		*d = *src.(**int64)
	case *[]string:
		*d = *src.(*[]string)
	default:
		panic(fmt.Sprintf("storage: call field of type %T", dst))
	}
}

// SameFieldValue reports whether the fields a and b point to (from the
// same CallField) hold the same value: times by instant, JSON by its
// bytes, and a nil list equal to an empty one.
func SameFieldValue(a, b any) bool {
	switch x := a.(type) {
	case *string:
		return *x == *b.(*string)
	case *time.Time:
		return x.Equal(*b.(*time.Time))
	case **time.Time:
		return samePtr(*x, *b.(**time.Time), time.Time.Equal)
	case *json.RawMessage:
		return bytes.Equal(*x, *b.(*json.RawMessage))
	case **string:
		return samePtr(*x, *b.(**string), func(p, q string) bool { return p == q })
	case **int64:
		return samePtr(*x, *b.(**int64), func(p, q int64) bool { return p == q })
	case *[]string:
		return slices.Equal(*x, *b.(*[]string))
	}
	panic(fmt.Sprintf("storage: call field of type %T", a))
}

func samePtr[T any](a, b *T, equal func(T, T) bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return equal(*a, *b)
}

// FieldSize is about how many bytes the value of a field holds, for size
// estimates: the text of strings, JSON and refs; 8 for a time or number.
func FieldSize(v any) int {
	switch x := v.(type) {
	case *string:
		return len(*x)
	case *json.RawMessage:
		return len(*x)
	case **string:
		if *x != nil {
			return len(**x)
		}
	case *[]string:
		n := 0
		for _, s := range *x {
			n += len(s) + 2
		}
		return n
	case *time.Time, **time.Time, **int64:
		return 8
	}
	return 0
}
