package sqlgen

import (
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
)

// feedbackSpec is a parsed feedback.[<type>].<column>[.<path>] field.
type feedbackSpec struct {
	feedbackType string // "" for [*], any type
	column       string // payload, runnable_ref or trigger_ref
	segs         []querylang.Segment
}

func (s feedbackSpec) key() string {
	return s.feedbackType + "\x00" + s.column + "\x00" + querylang.JoinPath(s.segs)
}

const feedbackFieldHint = "use feedback.[<type>].payload.<path>, feedback.[<type>].runnable_ref or " +
	"feedback.[<type>].trigger_ref, with [*] for any type"

// parseFeedbackField parses a feedback field; the type runs from "[" to the
// first "]." so types may contain dots.
func parseFeedbackField(path string) (feedbackSpec, error) {
	rest := strings.TrimPrefix(path, "feedback.")
	end := strings.Index(rest, "].")
	if !strings.HasPrefix(rest, "[") || end < 2 {
		return feedbackSpec{}, fmt.Errorf("feedback field %q is malformed; %s: %w", path, feedbackFieldHint, storage.ErrFieldNotAllowed)
	}
	spec := feedbackSpec{feedbackType: rest[1:end]}
	if spec.feedbackType == "*" {
		spec.feedbackType = ""
	}
	segs := querylang.SplitPath(rest[end+2:])
	switch spec.column = segs[0].Key; {
	case spec.column == "payload":
		spec.segs = segs[1:]
	case (spec.column == "runnable_ref" || spec.column == "trigger_ref") && len(segs) == 1:
	default:
		return feedbackSpec{}, fmt.Errorf("feedback field %q is not allowed; %s: %w", path, feedbackFieldHint, storage.ErrFieldNotAllowed)
	}
	return spec, nil
}

// feedbackJoins collects the feedback fields a statement reads. Each
// becomes a CTE with one row per call: the value of the call's first
// matching feedback row (by created_at, then id), for [*] the first
// non-empty value.
type feedbackJoins struct {
	specs []feedbackSpec
	index map[string]int
}

func newFeedbackJoins() *feedbackJoins { return &feedbackJoins{index: map[string]int{}} }

// alias registers spec and returns the name of its CTE.
func (j *feedbackJoins) alias(spec feedbackSpec) string {
	i, ok := j.index[spec.key()]
	if !ok {
		i = len(j.specs)
		j.index[spec.key()] = i
		j.specs = append(j.specs, spec)
	}
	return fmt.Sprintf("_fb%d", i)
}

// ctes renders one CTE per registered field. projectID is the project
// placeholder; the call-ref prefix is bound here.
func (j *feedbackJoins) ctes(b *builder, projectID, projectParam string) []string {
	if len(j.specs) == 0 {
		return nil
	}
	d := b.d
	prefix := b.bind("weave:///"+projectID+"/call/", TypeString)
	out := make([]string, len(j.specs))
	for i, spec := range j.specs {
		value := "coalesce(f." + spec.column + ", '')"
		if spec.column == "payload" {
			value = d.JSONValue("f.payload", b.bind(d.JSONPath(spec.segs), TypeString))
		}
		where := []string{"f.project_id = " + projectParam, d.StartsWith("f.weave_ref", prefix)}
		filter := value + " <> ''"
		if spec.feedbackType != "" {
			where = append(where, "f.feedback_type = "+b.bind(spec.feedbackType, TypeString))
			filter = ""
		}
		out[i] = fmt.Sprintf("_fb%d AS (SELECT %s AS call_id, %s AS v FROM feedback f WHERE %s GROUP BY 1)",
			i, d.StripPrefix("f.weave_ref", prefix), d.FirstBy(value, "f.created_at, f.id", filter), andAll(where))
	}
	return out
}

// joins renders the LEFT JOINs of the registered CTEs onto the calls
// table aliased callAlias.
func (j *feedbackJoins) joins(callAlias string) string {
	var sb strings.Builder
	for i := range j.specs {
		fmt.Fprintf(&sb, " LEFT JOIN _fb%d ON _fb%d.call_id = %s.id", i, i, callAlias)
	}
	return sb.String()
}
