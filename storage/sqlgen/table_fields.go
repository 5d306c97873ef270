package sqlgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/weftdev/weft/storage"
)

// OutKind says how a selected value reads back.
type OutKind int

// Output kinds.
const (
	OutString OutKind = iota + 1 // text or NULL
	OutTime                      // timestamp, rendered ISO-8601
	OutFloat                     // number
	OutJSON                      // JSON text, embedded as is
	OutCount                     // integer
)

// Output is one selected value: its key in the result object and kind.
type Output struct {
	Key  string
	Kind OutKind
}

func (b *builder) tableFields(t Table, fields []string) ([]string, []Output, error) {
	if fields == nil {
		fields = make([]string, len(t.Columns))
		for i, c := range t.Columns {
			fields[i] = c.Name
		}
	}
	if len(fields) == 0 {
		return nil, nil, fmt.Errorf("fields must name at least one field, or be omitted for all: %w", storage.ErrInvalidArgument)
	}
	sel := make([]string, len(fields))
	outs := make([]Output, len(fields))
	for i, f := range fields {
		if strings.EqualFold(f, CountField) {
			if len(fields) > 1 {
				return nil, nil, fmt.Errorf("fields: %s cannot be combined with other fields: %w", CountField, storage.ErrInvalidArgument)
			}
			return []string{"count(*)"}, []Output{{Key: f, Kind: OutCount}}, nil
		}
		s, kind, err := b.tableField(t, f)
		if err != nil {
			return nil, nil, err
		}
		sel[i], outs[i] = s, Output{Key: f, Kind: kind}
	}
	return sel, outs, nil
}

func (b *builder) tableField(t Table, f string) (string, OutKind, error) {
	if col, ok := t.column(f); ok {
		return col.Name, outKindOf(col.Kind), nil
	}
	if col, segs, ok := tableJSONPath(t, f); ok {
		return b.d.JSONValue(col.Name, b.bind(b.d.JSONPath(segs), TypeString)), OutString, nil
	}
	return "", 0, unknownTableField(t, f)
}

func outKindOf(k ColumnKind) OutKind {
	switch k {
	case ColTime:
		return OutTime
	case ColFloat:
		return OutFloat
	case ColJSON:
		return OutJSON
	}
	return OutString
}

// orderBy renders sort terms. A JSON column or path sorts by existence
// (present first), then as a number, then as text; NULLs sort last.
func (b *builder) tableOrderBy(t Table, terms []storage.SortBy) (string, error) {
	var parts []string
	for _, s := range terms {
		dir := strings.ToUpper(s.Direction)
		if dir != "ASC" && dir != "DESC" {
			return "", fmt.Errorf("sort_by %s: direction must be asc or desc, got %q: %w", s.Field, s.Direction, storage.ErrInvalidArgument)
		}
		if col, ok := t.column(s.Field); ok {
			if col.Kind == ColJSON {
				parts = append(parts, "("+col.Name+" IS NOT NULL) DESC", col.Name+" "+dir+" NULLS LAST")
			} else {
				parts = append(parts, col.Name+" "+dir+" NULLS LAST")
			}
			continue
		}
		col, segs, ok := tableJSONPath(t, s.Field)
		if !ok {
			return "", unknownTableField(t, s.Field)
		}
		path := b.bind(b.d.JSONPath(segs), TypeString)
		value := b.d.JSONValue(col.Name, path)
		parts = append(parts, b.d.JSONExists(col.Name, path)+" DESC",
			b.d.ParseFloat(value)+" "+dir+" NULLS LAST", value+" "+dir+" NULLS LAST")
	}
	if len(parts) == 0 {
		return "", nil
	}
	return " ORDER BY " + strings.Join(parts, ", "), nil
}

// TableRowJSON renders one scanned row as a JSON object, keys in output order.
// vals hold what database/sql scans into any: nil, string, []byte,
// time.Time, float64 or an integer.
func TableRowJSON(outs []Output, vals []any) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, o := range outs {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(o.Key)
		buf.Write(key)
		buf.WriteByte(':')
		if err := writeTableValue(&buf, o, vals[i]); err != nil {
			return nil, fmt.Errorf("column %s: %w", o.Key, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeTableValue(buf *bytes.Buffer, o Output, v any) error {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if v == nil {
		buf.WriteString("null")
		return nil
	}
	switch o.Kind {
	case OutJSON:
		s, ok := v.(string)
		if !ok || !json.Valid([]byte(s)) {
			return fmt.Errorf("stored JSON is not valid: %v", v)
		}
		buf.WriteString(s)
		return nil
	case OutTime:
		t, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("want a timestamp, got %T", v)
		}
		v = formatTime(t)
	case OutFloat:
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil
		}
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf.Write(enc)
	return nil
}

// formatTime prints a stored datetime as the API answers datetimes:
// ISO-8601 UTC, microseconds when there are any.
func formatTime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}
