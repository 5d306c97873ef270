package sqlgen

// This file renders the queries of the small Weave tables that are queried
// column by column — feedback (/feedback/query) and prices (/cost/query):
// a field list (columns, dotted paths into the table's JSON column, or
// count(*)), a querylang expression, sort terms, limit and offset, always
// under fixed scope predicates (the project). TableRowJSON turns scanned
// rows into the JSON objects the endpoints answer.
//
// Semantics follow the reference server's table ORM: plain columns compare
// with their type; a dotted JSON path reads as a string unless compared
// with a number or boolean literal, which casts it; datetime columns
// compare with ISO-8601 or unix-seconds literals; JSON paths sort by
// existence, then numerically, then as text. Unknown fields are
// ErrInvalidArgument (HTTP 400), as there.

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// ColumnKind is the type of a column.
type ColumnKind int

// Column kinds.
const (
	ColString ColumnKind = iota + 1 // text, possibly NULL
	ColTime                         // TIMESTAMP
	ColFloat                        // DOUBLE
	ColJSON                         // JSON text; dotted paths read into it
)

// Column is one column; its name is the same on the wire and in SQL.
type Column struct {
	Name string
	Kind ColumnKind
}

// Table describes a queryable table.
type Table struct {
	Name    string
	Columns []Column
}

func (t Table) column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// TableScope is a fixed equality predicate of every statement (project_id = ?).
type TableScope struct {
	Column string
	Value  string
}

// TableQuery is an authorised query over a Table.
type TableQuery struct {
	Scope  []TableScope // must not be empty
	Fields []string     // nil: every column in table order
	Where  querylang.Expr
	SortBy []storage.SortBy
	Limit  *int64 // nil: no limit
	Offset int64
}

// CountField is the field that asks for the number of matching rows.
const CountField = "count(*)"

// TableSelect renders the row query and says how to read each selected value.
func TableSelect(d Dialect, t Table, q TableQuery) (Statement, []Output, error) {
	b := newBuilder(d)
	sel, outs, err := b.tableFields(t, q.Fields)
	if err != nil {
		return Statement{}, nil, err
	}
	where, err := b.tableWhere(t, q)
	if err != nil {
		return Statement{}, nil, err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), t.Name, where)
	if len(outs) == 1 && outs[0].Kind == OutCount {
		return Statement{SQL: sb.String(), Args: b.args}, outs, nil
	}
	order, err := b.tableOrderBy(t, q.SortBy)
	if err != nil {
		return Statement{}, nil, err
	}
	sb.WriteString(order)
	if err := b.tablePage(&sb, q.Limit, q.Offset); err != nil {
		return Statement{}, nil, err
	}
	return Statement{SQL: sb.String(), Args: b.args}, outs, nil
}

// TableCount renders the number of rows q matches, ignoring fields, sort and
// paging.
func TableCount(d Dialect, t Table, q TableQuery) (Statement, error) {
	b := newBuilder(d)
	where, err := b.tableWhere(t, q)
	if err != nil {
		return Statement{}, err
	}
	return Statement{SQL: "SELECT count(*) FROM " + t.Name + " WHERE " + where, Args: b.args}, nil
}

func (b *builder) tableWhere(t Table, q TableQuery) (string, error) {
	if len(q.Scope) == 0 {
		return "", fmt.Errorf("BUG: a %s query without scope", t.Name)
	}
	preds := make([]string, 0, len(q.Scope)+1)
	for _, s := range q.Scope {
		preds = append(preds, s.Column+" = "+b.bind(s.Value, TypeString))
	}
	if q.Where != nil {
		c := &tableCompiler{b: b, t: t}
		p, err := c.predicate(q.Where)
		if err != nil {
			return "", err
		}
		preds = append(preds, p)
	}
	return strings.Join(preds, " AND "), nil
}

func (b *builder) tablePage(sb *strings.Builder, limit *int64, offset int64) error {
	if limit != nil {
		if *limit < 0 {
			return fmt.Errorf("limit must be 0 or more, got %d: %w", *limit, storage.ErrInvalidArgument)
		}
		sb.WriteString(" LIMIT " + b.bind(*limit, TypeInt))
	}
	if offset < 0 {
		return fmt.Errorf("offset must be 0 or more, got %d: %w", offset, storage.ErrInvalidArgument)
	}
	if offset > 0 {
		sb.WriteString(" OFFSET " + b.bind(offset, TypeInt))
	}
	return nil
}

// tableJSONPath splits a field into a JSON column and a path inside it; ok is
// false for anything else.
func tableJSONPath(t Table, field string) (Column, []querylang.Segment, bool) {
	segs := querylang.SplitPath(field)
	col, ok := t.column(segs[0].Key)
	if !ok || col.Kind != ColJSON || len(segs) < 2 {
		return Column{}, nil, false
	}
	return col, segs[1:], true
}

func unknownTableField(t Table, field string) error {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return fmt.Errorf("Unknown field: %s; use one of %s, or a dotted path into a JSON column: %w",
		field, strings.Join(names, ", "), storage.ErrInvalidArgument)
}
