package clickhouse

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/weftdev/weft/storage"
)

// callRow is one version of a call as the calls table stores it.
type callRow struct {
	call     storage.Call // DeletedAt included
	version  uint64
	anchorAt time.Time
	hasStart bool
	hasEnd   bool
	renamed  bool // an update set display_name; a later start keeps it
	expireAt *time.Time
}

// rowColumns are the columns of a calls row, in the order scanRow reads
// and values writes them: the call's key, the row's own columns, the
// rest of the call's fields (storage.CallFields) and the row's tail.
var rowColumns = slices.Concat([]string{"project_id", "id", "version", "anchor_at", "has_start", "has_end"},
	storage.CallColumns(rowFieldSides...), []string{"expire_at", "renamed"})

// rowFieldSides are the sides of the call fields after the row's own
// columns: all but the key.
var rowFieldSides = []storage.CallSide{storage.SideStart, storage.SideEnd, storage.SideDelete}

// rowFields are the call fields of rowFieldSides.
var rowFields = storage.CallFieldsOf(rowFieldSides...)

// startedColumn is the start time: a sentinel in rows without a start.
const startedColumn = "started_at"

// columnPrecision is how finely a time column keeps its value.
func columnPrecision(column string) time.Duration {
	if column == "deleted_at" {
		return time.Millisecond
	}
	return time.Microsecond
}

// rowColumnList is rowColumns for SELECT and INSERT.
var rowColumnList = strings.Join(rowColumns, ", ")

// noStart is the started_at sentinel of end-only rows.
var noStart = time.Unix(0, 0).UTC()

// kind says which sides the row holds.
func (r *callRow) kind() storage.PartKind {
	var k storage.PartKind
	if r.hasStart {
		k |= storage.PartStart
	}
	if r.hasEnd {
		k |= storage.PartEnd
	}
	return k
}

// values renders the row for a batch Append, in rowColumns order.
func (r *callRow) values() []any {
	c := &r.call
	row := make([]any, 0, len(rowColumns))
	row = append(row, c.ProjectID, c.ID, r.version, r.anchorAt, r.hasStart, r.hasEnd)
	for _, f := range rowFields {
		switch v := f.Of(c).(type) {
		case *time.Time: // started_at
			started := noStart
			if r.hasStart && !v.IsZero() {
				started = *v
			}
			row = append(row, started)
		case *json.RawMessage:
			row = append(row, string(*v))
		case *[]string:
			row = append(row, listOrEmpty(*v))
		case *string:
			row = append(row, *v)
		case **time.Time:
			row = append(row, *v)
		case **string:
			row = append(row, *v)
		case **int64:
			row = append(row, *v)
		default:
			panic(fmt.Sprintf("clickhouse: call field %s of type %T", f.Column, v))
		}
	}
	return append(row, r.expireAt, r.renamed)
}

func listOrEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// scanRow reads one row selected with rowColumnList.
func scanRow(rows driver.Rows) (callRow, error) {
	var r callRow
	c := &r.call
	var started time.Time
	texts := make(map[*json.RawMessage]*string)
	dest := []any{&c.ProjectID, &c.ID, &r.version, &r.anchorAt, &r.hasStart, &r.hasEnd}
	for _, f := range rowFields {
		switch v := f.Of(c).(type) {
		case *time.Time: // started_at, kept only in a row with a start
			dest = append(dest, &started)
		case *json.RawMessage: // text, "" when not set
			var s string
			texts[v] = &s
			dest = append(dest, &s)
		default: // the column's own type
			dest = append(dest, v)
		}
	}
	dest = append(dest, &r.expireAt, &r.renamed)
	if err := rows.Scan(dest...); err != nil {
		return callRow{}, err
	}
	if r.hasStart {
		c.StartedAt = started.UTC()
	}
	for j, s := range texts {
		*j = jsonOrNil(*s)
	}
	for _, f := range rowFields {
		if t, ok := f.Of(c).(**time.Time); ok {
			*t = utcPtr(*t)
		}
	}
	r.anchorAt, r.expireAt = r.anchorAt.UTC(), utcPtr(r.expireAt)
	return r, nil
}

// jsonOrNil maps the empty-string sentinel back to "not set".
func jsonOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// normalizeCall brings an incoming call to what the table stores, so a
// re-sent part compares equal to the row it produced: UTC times at the
// column precision, empty JSON as not set.
func normalizeCall(c storage.Call) storage.Call {
	if !c.StartedAt.IsZero() {
		c.StartedAt = c.StartedAt.UTC().Truncate(columnPrecision(startedColumn))
	}
	for _, f := range rowFields {
		switch v := f.Of(&c).(type) {
		case **time.Time:
			*v = truncPtr(*v, columnPrecision(f.Column))
		case *json.RawMessage:
			if len(*v) == 0 {
				*v = nil
			}
		}
	}
	return c
}

func truncPtr(t *time.Time, d time.Duration) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(d)
	return &u
}

// sameRow reports whether two versions hold the same call, so that writing
// b over a is a no-op.
func sameRow(a, b *callRow) bool {
	if a.hasStart != b.hasStart || a.hasEnd != b.hasEnd || a.renamed != b.renamed || !a.anchorAt.Equal(b.anchorAt) ||
		!storage.SameFieldValue(&a.expireAt, &b.expireAt) {
		return false
	}
	for _, f := range storage.CallFields {
		if !storage.SameFieldValue(f.Of(&a.call), f.Of(&b.call)) {
			return false
		}
	}
	return true
}
