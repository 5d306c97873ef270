package sqlgen

import (
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
)

// CallColumns is the fixed, ordered select list of CallsSelect. JSON
// columns come back as text; a column left out by the query's projection,
// and a size that was not requested, comes back NULL.
var CallColumns = []string{
	"project_id", "id", "trace_id", "parent_id", "thread_id", "turn_id",
	"op_name", "display_name", "started_at", "ended_at",
	"attributes", "inputs", "output", "summary", "otel_dump", "exception",
	"wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end",
	"deleted_at", "expire_at",
	"storage_size_bytes", "total_storage_size_bytes",
}

// CountColumns is the select list of CallsCount: one row with the count and
// the summed trace sizes (NULL unless requested).
var CountColumns = []string{"count", "total_storage_size_bytes"}

// column describes a plain calls column as queries see it.
type column struct {
	typ Type
	// optional strings store absence as NULL or ''; queries treat both as
	// NULL, as reads return them.
	optional bool
}

// plainColumn looks up a plain call column by wire name.
func plainColumn(name string) (column, bool) {
	switch name {
	case "id", "project_id", "trace_id", "op_name", "exception":
		return column{typ: TypeString}, true
	case "parent_id", "thread_id", "turn_id", "display_name", "wb_user_id", "wb_run_id":
		return column{typ: TypeString, optional: true}, true
	case "started_at", "ended_at", "deleted_at", "expire_at":
		return column{typ: TypeTime}, true
	case "wb_run_step", "wb_run_step_end":
		return column{typ: TypeInt}, true
	case "input_refs", "output_refs":
		return column{typ: TypeStringList}, true
	}
	return column{}, false
}

// isJSONColumn reports the columns stored as JSON text.
func isJSONColumn(name string) bool {
	switch name {
	case "attributes", "inputs", "output", "summary", "otel_dump":
		return true
	}
	return false
}

// requiredColumns are selected whatever the projection says.
var requiredColumns = []string{"id", "trace_id", "project_id", "op_name", "started_at"}

// projection resolves q.Columns into the set of CallColumns to return; nil
// means all. Entries name top-level fields: a dotted entry keeps its first
// segment and a "_dump" suffix is dropped ("inputs_dump" is "inputs").
func projection(q storage.CallsQuery) map[string]bool {
	if q.Columns == nil {
		return nil
	}
	sel := map[string]bool{}
	for _, c := range q.Columns {
		top, _, _ := strings.Cut(c, ".")
		if base, ok := strings.CutSuffix(top, "_dump"); ok && slices.Contains(CallColumns, base) {
			top = base
		}
		sel[top] = true
	}
	for _, c := range requiredColumns {
		sel[c] = true
	}
	if q.IncludeCosts {
		sel["summary"] = true
	}
	if q.IncludeUsernames {
		sel["wb_user_id"] = true
	}
	if sel["summary"] {
		sel["ended_at"], sel["exception"], sel["display_name"] = true, true, true
	}
	if sel["attributes"] {
		// Reads fold otel_dump into attributes.otel_span.
		sel["otel_dump"] = true
	}
	return sel
}
