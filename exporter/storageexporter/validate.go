package storageexporter

import (
	"fmt"
	"unicode/utf8"

	"github.com/weftdev/weft/storage"
)

// validateOps refuses records the store could not hold, before they are
// acknowledged: an acknowledged record the store later refused would be
// set aside instead of stored. Every text value must be valid UTF-8.
func validateOps(ops []storage.CallOp) error {
	for i, op := range ops {
		if field := invalidText(op); field != "" {
			return fmt.Errorf("%w: record %d: %s is not valid UTF-8; send UTF-8 text", storage.ErrInvalidArgument, i, field)
		}
	}
	return nil
}

// field is a named text value.
type field struct{ name, value string }

func invalidText(op storage.CallOp) string {
	switch {
	case op.Part != nil:
		return invalidCallText(&op.Part.Call)
	case op.Update != nil:
		u := op.Update
		return firstInvalid(field{"project_id", u.ProjectID}, field{"id", u.ID}, field{"display_name", u.DisplayName}, field{"wb_user_id", u.WBUserID})
	case op.Delete != nil:
		if !allValid(op.Delete.IDs) {
			return "call_ids"
		}
		return firstInvalid(field{"project_id", op.Delete.ProjectID}, field{"wb_user_id", op.Delete.WBUserID})
	}
	return ""
}

func invalidCallText(c *storage.Call) string {
	if f := firstInvalid(
		field{"project_id", c.ProjectID}, field{"id", c.ID}, field{"trace_id", c.TraceID}, field{"parent_id", c.ParentID},
		field{"thread_id", c.ThreadID}, field{"turn_id", c.TurnID}, field{"op_name", c.OpName}, field{"display_name", c.DisplayName},
		field{"wb_user_id", c.WBUserID}, field{"wb_run_id", c.WBRunID},
	); f != "" {
		return f
	}
	switch {
	case !utf8.Valid(c.Attributes):
		return "attributes"
	case !utf8.Valid(c.Inputs):
		return "inputs"
	case !utf8.Valid(c.Output):
		return "output"
	case !utf8.Valid(c.Summary):
		return "summary"
	case !utf8.Valid(c.OtelDump):
		return "otel_dump"
	case c.Exception != nil && !utf8.ValidString(*c.Exception):
		return "exception"
	case !allValid(c.InputRefs) || !allValid(c.OutputRefs):
		return "refs"
	}
	return ""
}

func firstInvalid(fields ...field) string {
	for _, f := range fields {
		if !utf8.ValidString(f.value) {
			return f.name
		}
	}
	return ""
}

func allValid(ss []string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
