package sqlgen

import "github.com/weftdev/weft/storage"

// ProjectColumns is the select list of ProjectsSelect, in the order of
// storage.ProjectSummary's fields.
var ProjectColumns = []string{"project_id", "call_count", "last_call_at"}

// ProjectsSelect renders the listing of entity's projects that hold
// visible calls, most recently active first.
func ProjectsSelect(d Dialect, entity string) Statement {
	b := newBuilder(d)
	sql := "SELECT c.project_id AS project_id, count(*) AS call_count, max(c.started_at) AS last_call_at FROM " +
		d.ReadCurrent(callsTable, "c") + " WHERE " + d.StartsWith("c.project_id", b.bind(entity+"/", TypeString)) +
		" AND c.has_start AND c.deleted_at IS NULL GROUP BY c.project_id ORDER BY last_call_at DESC, project_id LIMIT " +
		b.bind(int64(storage.MaxProjects), TypeInt)
	return Statement{SQL: sql, Args: b.args}
}
