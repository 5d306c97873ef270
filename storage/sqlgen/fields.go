package sqlgen

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

type fieldKind int

const (
	fieldColumn   fieldKind = iota // a plain call column
	fieldJSON                      // a path into inputs, output, attributes or summary
	fieldComputed                  // summary.weave.status | latency_ms | trace_name | total_tokens | cost
	fieldFeedback                  // feedback.[type].payload.<path> and friends
)

// fieldInfo is a resolved $getField path or sort field. Resolving binds
// nothing; rendering does.
type fieldInfo struct {
	path string
	kind fieldKind
	typ  Type   // type of the uncast value
	name string // column, JSON root column, or summary.weave field
	segs []querylang.Segment
	opt  bool // optional string column: '' reads as NULL
	fb   feedbackSpec
}

// castable reports whether a literal's inferred cast applies: dynamic
// JSON fields and feedback fields of one type are strings that numeric
// and boolean literals parse.
func (f fieldInfo) castable() bool {
	return f.kind == fieldJSON || (f.kind == fieldFeedback && f.fb.feedbackType != "")
}

// allowedFieldsHint is appended to field errors.
const allowedFieldsHint = "use a call column (id, trace_id, parent_id, thread_id, turn_id, op_name, display_name, " +
	"started_at, ended_at, exception, wb_user_id, wb_run_id, wb_run_step, wb_run_step_end, deleted_at, expire_at, " +
	"input_refs, output_refs), a path under inputs, output, attributes or summary, summary.weave.status|latency_ms|trace_name|total_tokens|cost, " +
	"or feedback.[<type>].payload.<path>"

// lookupField resolves a field path of a calls query.
func lookupField(path string) (fieldInfo, error) {
	switch {
	case path == "storage_size_bytes" || path == "total_storage_size_bytes":
		return fieldInfo{}, fmt.Errorf("field %q cannot be filtered or sorted on; request it with include_storage_size instead: %w",
			path, storage.ErrFieldNotAllowed)
	case strings.HasPrefix(path, "summary.weave."):
		return summaryField(path)
	case strings.HasPrefix(path, "feedback."):
		spec, err := parseFeedbackField(path)
		return fieldInfo{path: path, kind: fieldFeedback, typ: TypeString, fb: spec}, err
	}
	segs := querylang.SplitPath(path)
	switch root := segs[0].Key; root {
	case "inputs", "output", "attributes", "summary":
		return fieldInfo{path: path, kind: fieldJSON, typ: TypeString, name: root, segs: segs[1:]}, nil
	}
	if col, ok := plainColumn(path); ok {
		return fieldInfo{path: path, kind: fieldColumn, typ: col.typ, name: path, opt: col.optional}, nil
	}
	return fieldInfo{}, fmt.Errorf("field %q is not allowed; %s: %w", path, allowedFieldsHint, storage.ErrFieldNotAllowed)
}

func summaryField(path string) (fieldInfo, error) {
	name := strings.TrimPrefix(path, "summary.weave.")
	f := fieldInfo{path: path, kind: fieldComputed, name: name}
	switch name {
	case "status", "trace_name":
		f.typ = TypeString
	case "latency_ms":
		f.typ = TypeInt
	case "total_tokens", "cost":
		f.typ = TypeFloat
	default:
		return fieldInfo{}, fmt.Errorf("summary field %q is not allowed; supported fields are summary.weave.latency_ms, "+
			"summary.weave.status, summary.weave.trace_name, summary.weave.total_tokens and summary.weave.cost: %w",
			path, storage.ErrFieldNotAllowed)
	}
	return f, nil
}

// fields renders resolved fields of the calls table aliased alias.
type fields struct {
	d        Dialect
	b        *builder
	alias    string
	feedback *feedbackJoins
	paths    map[string]string // JSON path text -> placeholder, bound once
	prices   []pricing.Price   // candidates of summary.weave.cost
	sched    []pricing.Span    // their schedule, laid out once
	spans    *PriceSpans       // the schedule, bound once
	// costModels are the models CostModels names, priced as constants.
	costModels []string
}

func newFields(b *builder, alias string) *fields {
	return &fields{d: b.d, b: b, alias: alias, feedback: newFeedbackJoins(), paths: map[string]string{}}
}

func (fs *fields) col(name string) string {
	if fs.alias == "" {
		return name
	}
	return fs.alias + "." + name
}

// jsonPath binds the dialect encoding of segs once per statement.
func (fs *fields) jsonPath(segs []querylang.Segment) string {
	text := fs.d.JSONPath(segs)
	if ph, ok := fs.paths[text]; ok {
		return ph
	}
	ph := fs.b.bind(text, TypeString)
	fs.paths[text] = ph
	return ph
}

// value renders the uncast value of f.
func (fs *fields) value(f fieldInfo) string {
	switch f.kind {
	case fieldJSON:
		return fs.d.JSONValue(fs.col(f.name), fs.jsonPath(f.segs))
	case fieldComputed:
		return fs.computed(f.name)
	case fieldFeedback:
		return "coalesce(" + fs.feedback.alias(f.fb) + ".v, '')"
	}
	if f.opt {
		return "NULLIF(" + fs.col(f.name) + ", '')"
	}
	if f.typ == TypeStringList {
		return fs.d.StoredList(fs.col(f.name))
	}
	return fs.col(f.name)
}

// exists renders the existence test of f: a JSON path present and not
// null, a non-empty feedback value, or a non-NULL column.
func (fs *fields) exists(f fieldInfo) string {
	switch f.kind {
	case fieldJSON:
		return fs.d.JSONExists(fs.col(f.name), fs.jsonPath(f.segs))
	case fieldFeedback:
		return "(" + fs.value(f) + " <> '')"
	}
	return "(" + fs.value(f) + " IS NOT NULL)"
}

// computed renders the derived summary.weave fields. Status checks
// descendant errors before running, as the reference filter does.
func (fs *fields) computed(name string) string {
	d, c := fs.d, fs.col
	switch name {
	case "status":
		errCount := d.ParseInt(d.JSONValue(c("summary"), fs.jsonPath(querylang.SplitPath("status_counts.error"))))
		return "(CASE WHEN " + c("exception") + " IS NOT NULL THEN 'error'" +
			" WHEN coalesce(" + errCount + ", 0) > 0 THEN 'descendant_error'" +
			" WHEN " + c("ended_at") + " IS NULL THEN 'running' ELSE 'success' END)"
	case "total_tokens":
		if sd, ok := d.(StoredTokensDialect); ok {
			return c(sd.TokensColumn())
		}
		return fs.totalTokens()
	case "cost":
		return fs.cost()
	case "latency_ms":
		if sd, ok := d.(StoredLatencyDialect); ok {
			return c(sd.LatencyColumn())
		}
		return "(" + d.EpochMillis(c("ended_at")) + " - " + d.EpochMillis(c("started_at")) + ")"
	}
	return "(CASE WHEN " + c("display_name") + " IS NOT NULL AND " + c("display_name") + " <> '' THEN " + c("display_name") +
		" WHEN " + d.StartsWith(c("op_name"), "'weave:///'") + " THEN " + d.OpShortName(c("op_name")) +
		" ELSE " + c("op_name") + " END)"
}

// storageSize renders the storage size of the row of alias: the text
// length of its attributes, inputs, output and summary.
func storageSize(d Dialect, alias string) string {
	parts := make([]string, 0, 4)
	for _, col := range []string{"attributes", "inputs", "output", "summary"} {
		parts = append(parts, "coalesce("+d.TextLength(alias+"."+col)+", 0)")
	}
	return "(" + strings.Join(parts, " + ") + ")"
}
