package clickhouse

import (
	"bytes"
	"encoding/json"
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
// and values writes them.
var rowColumns = []string{
	"project_id", "id", "version", "anchor_at", "has_start", "has_end",
	"trace_id", "parent_id", "thread_id", "turn_id", "op_name", "display_name",
	"started_at", "ended_at", "attributes", "inputs", "output", "summary", "otel_dump",
	"exception", "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end",
	"input_refs", "output_refs", "deleted_at", "expire_at", "renamed",
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
	started := noStart
	if r.hasStart && !c.StartedAt.IsZero() {
		started = c.StartedAt
	}
	return []any{
		c.ProjectID, c.ID, r.version, r.anchorAt, r.hasStart, r.hasEnd,
		c.TraceID, c.ParentID, c.ThreadID, c.TurnID, c.OpName, c.DisplayName,
		started, c.EndedAt, string(c.Attributes), string(c.Inputs), string(c.Output), string(c.Summary), string(c.OtelDump),
		c.Exception, c.WBUserID, c.WBRunID, c.WBRunStep, c.WBRunStepEnd,
		listOrEmpty(c.InputRefs), listOrEmpty(c.OutputRefs), c.DeletedAt, r.expireAt, r.renamed,
	}
}

func listOrEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// scanRow reads one row selected with rowColumnList.
func scanRow(rows driver.Rows) (callRow, error) {
	var (
		r                                           callRow
		c                                           = &r.call
		started                                     time.Time
		attributes, inputs, output, summary, otelDp string
	)
	err := rows.Scan(&c.ProjectID, &c.ID, &r.version, &r.anchorAt, &r.hasStart, &r.hasEnd,
		&c.TraceID, &c.ParentID, &c.ThreadID, &c.TurnID, &c.OpName, &c.DisplayName,
		&started, &c.EndedAt, &attributes, &inputs, &output, &summary, &otelDp,
		&c.Exception, &c.WBUserID, &c.WBRunID, &c.WBRunStep, &c.WBRunStepEnd,
		&c.InputRefs, &c.OutputRefs, &c.DeletedAt, &r.expireAt, &r.renamed)
	if err != nil {
		return callRow{}, err
	}
	if r.hasStart {
		c.StartedAt = started.UTC()
	}
	c.Attributes, c.Inputs, c.Output = jsonOrNil(attributes), jsonOrNil(inputs), jsonOrNil(output)
	c.Summary, c.OtelDump = jsonOrNil(summary), jsonOrNil(otelDp)
	r.anchorAt = r.anchorAt.UTC()
	c.EndedAt, c.DeletedAt, r.expireAt = utcPtr(c.EndedAt), utcPtr(c.DeletedAt), utcPtr(r.expireAt)
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
		c.StartedAt = c.StartedAt.UTC().Truncate(time.Microsecond)
	}
	c.EndedAt = truncPtr(c.EndedAt, time.Microsecond)
	c.DeletedAt = truncPtr(c.DeletedAt, time.Millisecond)
	for _, j := range []*json.RawMessage{&c.Attributes, &c.Inputs, &c.Output, &c.Summary, &c.OtelDump} {
		if len(*j) == 0 {
			*j = nil
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
	x, y := &a.call, &b.call
	return a.hasStart == b.hasStart && a.hasEnd == b.hasEnd && a.renamed == b.renamed && a.anchorAt.Equal(b.anchorAt) &&
		samePtr(a.expireAt, b.expireAt, time.Time.Equal) &&
		x.ProjectID == y.ProjectID && x.ID == y.ID && x.TraceID == y.TraceID && x.ParentID == y.ParentID &&
		x.ThreadID == y.ThreadID && x.TurnID == y.TurnID && x.OpName == y.OpName && x.DisplayName == y.DisplayName &&
		x.StartedAt.Equal(y.StartedAt) && samePtr(x.EndedAt, y.EndedAt, time.Time.Equal) &&
		bytes.Equal(x.Attributes, y.Attributes) && bytes.Equal(x.Inputs, y.Inputs) && bytes.Equal(x.Output, y.Output) &&
		bytes.Equal(x.Summary, y.Summary) && bytes.Equal(x.OtelDump, y.OtelDump) &&
		samePtr(x.Exception, y.Exception, eq[string]) && x.WBUserID == y.WBUserID && x.WBRunID == y.WBRunID &&
		samePtr(x.WBRunStep, y.WBRunStep, eq[int64]) && samePtr(x.WBRunStepEnd, y.WBRunStepEnd, eq[int64]) &&
		slices.Equal(x.InputRefs, y.InputRefs) && slices.Equal(x.OutputRefs, y.OutputRefs) &&
		samePtr(x.DeletedAt, y.DeletedAt, time.Time.Equal)
}

func eq[T comparable](a, b T) bool { return a == b }

func samePtr[T any](a, b *T, equal func(T, T) bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return equal(*a, *b)
}
