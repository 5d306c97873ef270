package otelmap

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/weftdev/weft/internal/jsontext"
	"github.com/weftdev/weft/storage"
)

// Options tune a Mapper.
type Options struct {
	// MaxAttributeValueBytes cuts string and bytes attribute values longer
	// than this many bytes; the call lists the cut keys under
	// attributes.weft.truncated. 0 means no limit.
	MaxAttributeValueBytes int
	// Conventions to apply; nil means DefaultConventions().
	Conventions *Conventions
}

// Input is what a request carries besides its spans.
type Input struct {
	// ProjectID ("entity/project"), when set, is the project of every
	// span; otherwise each resource names its project with the attributes
	// wandb.entity and wandb.project.
	ProjectID string
	// WBUserID is the authenticated user, stored on every call.
	WBUserID string
}

// Rejection says why one span did not become a call. The indices locate
// the span in the request.
type Rejection struct {
	Resource, Scope, Span int
	Name                  string
	TraceID, SpanID       string // hex
	Reason                string
}

func (r Rejection) String() string {
	return fmt.Sprintf("span %q (trace_id %s, span_id %s): %s", r.Name, r.TraceID, r.SpanID, r.Reason)
}

// ReasonNoProject is the Reason of spans whose resource names no project.
const ReasonNoProject = "no project: set the project_id header to entity/project, " +
	"or the resource attributes wandb.entity and wandb.project"

// Result is the outcome of mapping one request.
type Result struct {
	// Parts holds one complete call part per accepted span, in request order.
	Parts []storage.CallPart
	// Rejected lists the spans that could not be mapped.
	Rejected []Rejection
	// Projects lists the distinct projects of Parts, first seen first.
	Projects []string
	// NoProject counts the rejections for lack of a project.
	NoProject int
}

// Mapper turns OTLP spans into Weave calls. It is safe for concurrent use;
// Map has no side effects.
type Mapper struct {
	opts Options
	conv compiled
	pool sync.Pool // *mapState, reused across requests to avoid garbage
}

// NewMapper builds a Mapper.
func NewMapper(opts Options) *Mapper {
	conv := DefaultConventions()
	if opts.Conventions != nil {
		conv = *opts.Conventions
	}
	m := &Mapper{opts: opts, conv: compile(conv)}
	m.pool.New = func() any { return &mapState{} }
	return m
}

// maxKeptBuffer bounds the scratch buffer a pooled state keeps.
const maxKeptBuffer = 1 << 20

// mapState is the scratch space of one Map call.
type mapState struct {
	t     tree
	view  spanView
	links []int32
	buf   []byte
	attrs []attrEntry
	usage []usageCount
}

// ProjectOf returns "entity/project" from the resource attributes
// wandb.entity and wandb.project, or "" when either is missing.
func ProjectOf(res pcommon.Resource) string {
	e, ok1 := res.Attributes().Get("wandb.entity")
	p, ok2 := res.Attributes().Get("wandb.project")
	if !ok1 || !ok2 {
		return ""
	}
	entity, project := strings.TrimSpace(e.AsString()), strings.TrimSpace(p.AsString())
	if entity == "" || project == "" {
		return ""
	}
	return entity + "/" + project
}

// Map maps every span of td. Spans that cannot be mapped are listed in
// Result.Rejected and the others still map.
func (m *Mapper) Map(td ptrace.Traces, in Input) Result {
	st := m.pool.Get().(*mapState)
	defer m.release(st)
	st.t.maxValue = m.opts.MaxAttributeValueBytes
	res := Result{Parts: make([]storage.CallPart, 0, td.SpanCount())}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		m.mapResource(st, rss.At(i), i, in, &res)
	}
	return res
}

func (m *Mapper) release(st *mapState) {
	st.t.release()
	st.view = spanView{}
	st.links = st.links[:0]
	clear(st.attrs)
	st.attrs = st.attrs[:0]
	if cap(st.buf) > maxKeptBuffer {
		st.buf = nil // one huge span must not pin memory for good
	}
	m.pool.Put(st)
}

func (m *Mapper) mapResource(st *mapState, rs ptrace.ResourceSpans, ri int, in Input, res *Result) {
	project := in.ProjectID
	if project == "" {
		project = ProjectOf(rs.Resource())
	}
	sc := scopeCtx{project: project, wbUserID: in.WBUserID}
	reason := ""
	if project == "" {
		reason = ReasonNoProject
	} else if err := m.renderResource(st, rs.Resource(), &sc); err != nil {
		reason = "resource " + err.Error()
	}
	sss := rs.ScopeSpans()
	for si := 0; si < sss.Len(); si++ {
		ss := sss.At(si)
		sc.scope = ss.Scope()
		spans := ss.Spans()
		for k := 0; k < spans.Len(); k++ {
			span := spans.At(k)
			if reason != "" {
				res.reject(ri, si, k, span, reason)
				continue
			}
			call, err := m.mapSpan(st, &sc, span)
			if err != nil {
				res.reject(ri, si, k, span, err.Error())
				continue
			}
			res.add(call)
		}
	}
}

func (r *Result) reject(ri, si, k int, span ptrace.Span, reason string) {
	if reason == ReasonNoProject {
		r.NoProject++
	}
	r.Rejected = append(r.Rejected, Rejection{
		Resource: ri, Scope: si, Span: k,
		Name:    span.Name(),
		TraceID: span.TraceID().String(), SpanID: span.SpanID().String(),
		Reason: reason,
	})
}

func (r *Result) add(c storage.Call) {
	// Embedded JSON text attributes may hold lone surrogate escapes; they
	// become U+FFFD here, as in every Weave write.
	for _, doc := range []*json.RawMessage{&c.Attributes, &c.Inputs, &c.Output, &c.Summary, &c.OtelDump} {
		*doc = jsontext.CleanSurrogates(*doc)
	}
	r.Parts = append(r.Parts, storage.CallPart{Kind: storage.PartComplete, Call: c})
	for _, p := range r.Projects {
		if p == c.ProjectID {
			return
		}
	}
	r.Projects = append(r.Projects, c.ProjectID)
}

// RejectionMessage joins the first 20 rejections with "; " and appends
// "; ..." when there are more, as Weave's partial_success message does.
func RejectionMessage(rs []Rejection) string {
	const maxShown = 20
	var b strings.Builder
	for i, r := range rs {
		if i == maxShown {
			b.WriteString("; ...")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}
