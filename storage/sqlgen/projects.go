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

// ProjectDataColumns is the select list of ProjectDataSelect.
var ProjectDataColumns = []string{"project_id", "object_count", "table_count", "feedback_count", "last_at"}

// ProjectDataSelect renders the listing of entity's projects that hold
// object versions (not deleted), tables or feedback, with their counts
// and the latest creation, most recently active first. Feedback rows
// are never replaced in place (a MergeTree in ClickHouse), so its arm
// counts distinct ids without FINAL. Every arm reads
// one table by its project prefix and has the same column types, so the
// union needs no casts in either dialect.
func ProjectDataSelect(d Dialect, entity string) Statement {
	b := newBuilder(d)
	arm := func(from, alias, counts, where string) string {
		return "SELECT " + alias + ".project_id AS project_id, " + counts + ", max(" + alias + ".created_at) AS last_at FROM " +
			from + " WHERE " + d.StartsWith(alias+".project_id", b.bind(entity+"/", TypeString)) + where +
			" GROUP BY " + alias + ".project_id"
	}
	// n lists the three counts, expr at which and a zero of count's
	// type elsewhere.
	n := func(which int, expr string) string {
		cols := []string{"0 * count(*)", "0 * count(*)", "0 * count(*)"}
		cols[which] = expr
		return cols[0] + " AS object_count, " + cols[1] + " AS table_count, " + cols[2] + " AS feedback_count"
	}
	sql := "SELECT project_id, sum(object_count) AS object_count, sum(table_count) AS table_count, " +
		"sum(feedback_count) AS feedback_count, max(last_at) AS last_at FROM (" +
		arm(d.ReadCurrent("object_versions", "o"), "o", n(0, "count(*)"), " AND o.deleted_at IS NULL") + " UNION ALL " +
		arm(d.ReadCurrent("tables", "t"), "t", n(1, "count(*)"), "") + " UNION ALL " +
		arm("feedback AS f", "f", n(2, "count(DISTINCT f.id)"), "") +
		") _d GROUP BY project_id ORDER BY last_at DESC, project_id LIMIT " + b.bind(int64(storage.MaxProjects), TypeInt)
	return Statement{SQL: sql, Args: b.args}
}

// ProjectBytesColumns is the select list of ProjectBytesSelect.
var ProjectBytesColumns = []string{"object_bytes", "table_bytes", "file_bytes"}

// ProjectBytesSelect renders the sizes of a project's live object
// versions, table rows and files, one row of ProjectBytesColumns, from
// the sizes stored with each at write time.
func ProjectBytesSelect(d Dialect, projectID string) Statement {
	b := newBuilder(d)
	p := b.bind(projectID, TypeString)
	sum := func(table, where string) string {
		return "(SELECT " + d.SumInt("x.size_bytes") + " FROM " + d.ReadCurrent(table, "x") + " WHERE x.project_id = " + p + where + ")"
	}
	sql := "SELECT coalesce(" + sum("object_versions", " AND x.deleted_at IS NULL") + ", 0) AS object_bytes, " +
		"coalesce(" + sum("table_rows", "") + ", 0) AS table_bytes, " +
		"coalesce(" + sum("files", "") + ", 0) AS file_bytes"
	return Statement{SQL: sql, Args: b.args}
}
