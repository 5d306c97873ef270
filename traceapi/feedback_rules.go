package traceapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/emoji"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// Feedback types with rules of their own.
const (
	reactionType     = "wandb.reaction.1"
	noteType         = "wandb.note.1"
	annotationPrefix = "wandb.annotation"
	runnablePrefix   = "wandb.runnable"
	maxNoteRunes     = 1024
)

// feedbackReq is FeedbackCreateReq on the wire.
type feedbackReq struct {
	ID                                           *string
	ProjectID, WeaveRef, FeedbackType            string
	Creator                                      *string
	Payload                                      json.RawMessage
	AnnotationRef, RunnableRef, CallRef, TrigRef *string
	QueueID, WBUserID                            *string
	extra                                        map[string]*json.RawMessage
}

// decodeFeedbackReq decodes a FeedbackCreateReq (strict at the top level);
// replaceID, when not nil, also accepts the feedback_id of /feedback/replace.
func decodeFeedbackReq(body []byte, replaceID *string) (feedbackReq, error) {
	var f feedbackReq
	fields := wire.Fields{"id": &f.ID, "project_id": &f.ProjectID, "weave_ref": &f.WeaveRef,
		"creator": &f.Creator, "feedback_type": &f.FeedbackType, "payload": &f.Payload,
		"annotation_ref": &f.AnnotationRef, "runnable_ref": &f.RunnableRef, "call_ref": &f.CallRef,
		"trigger_ref": &f.TrigRef, "queue_id": &f.QueueID, "wb_user_id": &f.WBUserID}
	f.extra = map[string]*json.RawMessage{}
	for _, k := range slices.Concat(storage.FeedbackScorerFields, storage.FeedbackSpanFields) {
		v := new(json.RawMessage)
		f.extra[k], fields[k] = v, v
	}
	required := []string{"project_id", "weave_ref", "feedback_type", "payload"}
	if replaceID != nil {
		fields["feedback_id"] = replaceID
		required = append(required, "feedback_id")
	}
	return f, wire.DecodeTop(body, fields, required...)
}

// feedbackRules validates and processes feedback the way the reference
// server does, producing rows ready to store.
type feedbackRules struct {
	emoji *emoji.Table
	now   func() time.Time
}

// row validates f and turns it into a stored row for user userID.
func (fr feedbackRules) row(f feedbackReq, userID string) (storage.Feedback, error) {
	if err := checkTarget(f); err != nil {
		return storage.Feedback{}, err
	}
	if err := checkTypeRules(f); err != nil {
		return storage.Feedback{}, err
	}
	payload, err := fr.processPayload(f)
	if err != nil {
		return storage.Feedback{}, err
	}
	extra, err := extraFields(f)
	if err != nil {
		return storage.Feedback{}, err
	}
	id := uuid.Must(uuid.NewV7()).String()
	if f.ID != nil && *f.ID != "" {
		id = *f.ID
	}
	return storage.Feedback{ID: id, ProjectID: f.ProjectID, WeaveRef: f.WeaveRef, WBUserID: userID,
		Creator: f.Creator, CreatedAt: fr.now().UTC().Truncate(time.Microsecond), FeedbackType: f.FeedbackType,
		Payload: payload, AnnotationRef: f.AnnotationRef, RunnableRef: f.RunnableRef, CallRef: f.CallRef,
		TriggerRef: f.TrigRef, QueueID: f.QueueID, Extra: extra}, nil
}

func invalid(msg string) error { return fmt.Errorf("%s: %w", msg, storage.ErrInvalidArgument) }

// checkTarget requires the payload to be an object and weave_ref a ref
// into the request's own project.
func checkTarget(f feedbackReq) error {
	if p := bytes.TrimSpace(f.Payload); len(p) == 0 || p[0] != '{' {
		return wire.NotObject("payload")
	}
	r, err := refs.Parse(f.WeaveRef)
	if err != nil || r.Scheme != refs.SchemeWeave {
		return &wire.FieldError{Field: "weave_ref", Msg: fmt.Sprintf("%q is not a ref; use weave:///<entity>/<project>/call/<id> or an object ref", f.WeaveRef)}
	}
	if r.ProjectID != f.ProjectID {
		return &wire.FieldError{Field: "weave_ref", Msg: fmt.Sprintf("points into project %q, not %q", r.ProjectID, f.ProjectID)}
	}
	return nil
}

func checkTypeRules(f feedbackReq) error {
	if err := checkPayloadSchema(f); err != nil {
		return err
	}
	t := f.FeedbackType
	switch {
	case strings.HasPrefix(t, annotationPrefix):
		if err := checkNamedRef(f, "annotation_ref", f.AnnotationRef, annotationPrefix, refs.KindObject); err != nil {
			return err
		}
		if !hasKey(f.Payload, "value") {
			return invalid(fmt.Sprintf("Invalid payload for feedback_type %s: payload must be {\"value\": ...}", t))
		}
	case f.AnnotationRef != nil:
		return invalid("annotation_ref is not allowed for non-annotation feedback")
	case strings.HasPrefix(t, runnablePrefix):
		if err := checkNamedRef(f, "runnable_ref", f.RunnableRef, runnablePrefix, refs.KindOp, refs.KindObject); err != nil {
			return err
		}
		if r, _ := refs.Parse(*f.RunnableRef); r.Kind == refs.KindOp && f.CallRef == nil {
			return invalid("call_ref is required for runnable feedback on ops")
		}
		if !hasKey(f.Payload, "output") {
			return invalid(fmt.Sprintf("Invalid payload for feedback_type %s: payload must be {\"output\": ...}", t))
		}
	case f.RunnableRef != nil:
		return invalid("runnable_ref is not allowed for non-runnable feedback")
	case f.CallRef != nil:
		return invalid("call_ref is not allowed for non-runnable feedback")
	case f.TrigRef != nil:
		return invalid("trigger_ref is not allowed for non-runnable feedback")
	}
	if err := checkRefKind("call_ref", f.CallRef, refs.KindCall); err != nil {
		return err
	}
	return checkRefKind("trigger_ref", f.TrigRef, refs.KindObject)
}

// checkPayloadSchema applies the payload models of the built-in types.
func checkPayloadSchema(f feedbackReq) error {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(f.Payload, &p)
	switch f.FeedbackType {
	case reactionType:
		var e string
		if json.Unmarshal(p["emoji"], &e) != nil {
			return invalid("Invalid payload for feedback_type " + reactionType + ": payload.emoji must be a string holding one emoji")
		}
	case noteType:
		var n string
		if json.Unmarshal(p["note"], &n) != nil || utf8.RuneCountInString(n) < 1 || utf8.RuneCountInString(n) > maxNoteRunes {
			return invalid(fmt.Sprintf("Invalid payload for feedback_type %s: payload.note must be a string of 1 to %d characters", noteType, maxNoteRunes))
		}
	}
	return nil
}

// checkNamedRef: type prefix.<name> needs a ref (of one of kinds) to an
// object called <name>.
func checkNamedRef(f feedbackReq, field string, ref *string, prefix string, kinds ...refs.Kind) error {
	name, ok := strings.CutPrefix(f.FeedbackType, prefix+".")
	if !ok || name == "" {
		return invalid(fmt.Sprintf("Invalid feedback type %s: use %s.<name>", f.FeedbackType, prefix))
	}
	if ref == nil || *ref == "" {
		return invalid(fmt.Sprintf("%s is required for %s feedback", field, strings.TrimPrefix(prefix, "wandb.")))
	}
	if err := checkRefKind(field, ref, kinds...); err != nil {
		return err
	}
	r, _ := refs.Parse(*ref)
	if r.Name != name {
		return invalid(fmt.Sprintf("%s must point to an object with name %s", field, name))
	}
	if r.ProjectID != f.ProjectID {
		return invalid(fmt.Sprintf("%s %s does not match project id %s", field, *ref, f.ProjectID))
	}
	return nil
}

func checkRefKind(field string, ref *string, kinds ...refs.Kind) error {
	if ref == nil {
		return nil
	}
	r, err := refs.Parse(*ref)
	if err == nil {
		for _, k := range kinds {
			if r.Kind == k {
				return nil
			}
		}
	}
	return invalid(fmt.Sprintf("%s %q must be a %s ref", field, *ref, kindNames(kinds)))
}

func kindNames(kinds []refs.Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, " or ")
}

func hasKey(obj json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}
