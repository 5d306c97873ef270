package duckdb

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
)

// callScanner scans rows by column name, so the reader does not depend on
// the order in which the SQL generator lists columns.
type callScanner struct {
	dest   []any
	assign []func(*storage.StoredCall)
	err    error // set by an assign that could not restore its value
}

func newCallScanner(rows *sql.Rows, dumps *dumpCodec) (*callScanner, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	sc := &callScanner{}
	for _, name := range cols {
		d, a := columnTarget(name, dumps, &sc.err)
		sc.dest = append(sc.dest, d)
		sc.assign = append(sc.assign, a)
	}
	return sc, nil
}

func (sc *callScanner) scan(rows *sql.Rows) (storage.StoredCall, error) {
	if err := rows.Scan(sc.dest...); err != nil {
		return storage.StoredCall{}, fmt.Errorf("scan call: %w", err)
	}
	var c storage.StoredCall
	for _, a := range sc.assign {
		if a != nil {
			a(&c)
		}
	}
	return c, sc.err
}

// columnTarget returns where a column scans to and how it lands in a call;
// a value that cannot be restored sets *errp.
func columnTarget(name string, dumps *dumpCodec, errp *error) (any, func(*storage.StoredCall)) {
	if name == "otel_dump" {
		v := new(sql.NullString)
		return v, func(c *storage.StoredCall) {
			if v.Valid {
				c.OtelDump, *errp = dumps.unpack(v.String)
			}
		}
	}
	if f, ok := stringColumns[name]; ok {
		v := new(sql.NullString)
		return v, func(c *storage.StoredCall) { *f(c) = v.String }
	}
	if f, ok := jsonColumns[name]; ok {
		v := new(sql.NullString)
		return v, func(c *storage.StoredCall) { *f(c) = rawOrNil(*v) }
	}
	if f, ok := int64Columns[name]; ok {
		v := new(sql.NullInt64)
		return v, func(c *storage.StoredCall) { *f(c) = int64Ptr(*v) }
	}
	if f, ok := timeColumns[name]; ok {
		v := new(sql.NullTime)
		return v, func(c *storage.StoredCall) { *f(c) = timePtr(*v) }
	}
	switch name {
	case "started_at":
		v := new(sql.NullTime)
		return v, func(c *storage.StoredCall) { c.StartedAt = v.Time.UTC() }
	case "exception":
		v := new(sql.NullString)
		return v, func(c *storage.StoredCall) { c.Exception = strPtr(*v) }
	case "input_refs", "output_refs":
		v := new(sql.NullString)
		return v, func(c *storage.StoredCall) { assignRefs(c, name, *v) }
	}
	return new(any), nil
}

var stringColumns = map[string]func(*storage.StoredCall) *string{
	"project_id": func(c *storage.StoredCall) *string { return &c.ProjectID },
	"id":         func(c *storage.StoredCall) *string { return &c.ID },
	"trace_id":   func(c *storage.StoredCall) *string { return &c.TraceID },
	"parent_id":  func(c *storage.StoredCall) *string { return &c.ParentID },
	"thread_id":  func(c *storage.StoredCall) *string { return &c.ThreadID },
	"turn_id":    func(c *storage.StoredCall) *string { return &c.TurnID },
	"op_name":    func(c *storage.StoredCall) *string { return &c.OpName },
	"display_name": func(c *storage.StoredCall) *string {
		return &c.DisplayName
	},
	"wb_user_id": func(c *storage.StoredCall) *string { return &c.WBUserID },
	"wb_run_id":  func(c *storage.StoredCall) *string { return &c.WBRunID },
}

var jsonColumns = map[string]func(*storage.StoredCall) *json.RawMessage{
	"attributes": func(c *storage.StoredCall) *json.RawMessage { return &c.Attributes },
	"inputs":     func(c *storage.StoredCall) *json.RawMessage { return &c.Inputs },
	"output":     func(c *storage.StoredCall) *json.RawMessage { return &c.Output },
	"summary":    func(c *storage.StoredCall) *json.RawMessage { return &c.Summary },
}

var int64Columns = map[string]func(*storage.StoredCall) **int64{
	"wb_run_step":              func(c *storage.StoredCall) **int64 { return &c.WBRunStep },
	"wb_run_step_end":          func(c *storage.StoredCall) **int64 { return &c.WBRunStepEnd },
	"storage_size_bytes":       func(c *storage.StoredCall) **int64 { return &c.StorageSizeBytes },
	"total_storage_size_bytes": func(c *storage.StoredCall) **int64 { return &c.TotalStorageSizeBytes },
}

var timeColumns = map[string]func(*storage.StoredCall) **time.Time{
	"ended_at":   func(c *storage.StoredCall) **time.Time { return &c.EndedAt },
	"deleted_at": func(c *storage.StoredCall) **time.Time { return &c.DeletedAt },
}

// assignRefs sets the refs a column keeps as a JSON array of strings
// (refsText); anything else reads as none.
func assignRefs(c *storage.StoredCall, name string, v sql.NullString) {
	out := []string{}
	if v.Valid {
		_ = json.Unmarshal([]byte(v.String), &out)
	}
	if name == "input_refs" {
		c.InputRefs = out
	} else {
		c.OutputRefs = out
	}
}

func rawOrNil(v sql.NullString) json.RawMessage {
	if !v.Valid {
		return nil
	}
	return json.RawMessage(v.String)
}

func int64Ptr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64 // a copy: the scan target is reused for the next row
	return &n
}

func timePtr(v sql.NullTime) *time.Time {
	if !v.Valid {
		return nil
	}
	t := v.Time.UTC()
	return &t
}

func strPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	str := v.String
	return &str
}
