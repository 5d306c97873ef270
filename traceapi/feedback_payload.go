package traceapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// processPayload compacts the payload, adds the names of a reaction's
// emoji and enforces the size limit.
func (fr feedbackRules) processPayload(f feedbackReq) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, f.Payload); err != nil {
		return nil, wire.NotObject("payload")
	}
	out := json.RawMessage(buf.Bytes())
	if f.FeedbackType == reactionType {
		var err error
		if out, err = fr.nameEmoji(out); err != nil {
			return nil, err
		}
	}
	if len(out) > storage.MaxFeedbackPayloadBytes {
		return nil, invalid(fmt.Sprintf("Feedback payload too large: %d bytes of JSON, at most %d", len(out), storage.MaxFeedbackPayloadBytes))
	}
	return out, nil
}

// nameEmoji adds alias, detoned and detoned_alias to a reaction payload.
func (fr feedbackRules) nameEmoji(payload json.RawMessage) (json.RawMessage, error) {
	var p map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, wire.NotObject("payload")
	}
	e, _ := p["emoji"].(string)
	if fr.emoji.Count(e) != 1 {
		return nil, invalid("Value of emoji key in payload must be exactly one emoji")
	}
	detoned := fr.emoji.Detone(e)
	p["alias"], p["detoned"], p["detoned_alias"] = fr.emoji.Demojize(e), detoned, fr.emoji.Demojize(detoned)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// extraFields collects the scorer and span fields that were set. Scorer
// fields are only allowed on runnable feedback.
func extraFields(f feedbackReq) (json.RawMessage, error) {
	set := map[string]json.RawMessage{}
	for k, v := range f.extra {
		if v == nil || storage.IsFeedbackExtraDefault(k, *v) {
			continue
		}
		if err := checkExtraType(k, *v); err != nil {
			return nil, err
		}
		set[k] = *v
	}
	if !strings.HasPrefix(f.FeedbackType, runnablePrefix) {
		for _, k := range storage.FeedbackScorerFields {
			if _, ok := set[k]; ok {
				return nil, invalid(strings.Join(storage.FeedbackScorerFields, ", ") + " are only allowed on wandb.runnable feedback")
			}
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	return json.Marshal(set)
}

// checkExtraType refuses a scorer or span field of the wrong shape, as the
// reference's request schema does (422): scorer_tags is a list of
// strings, the reasons map names to text, the ratings and confidences
// map names to numbers, the span fields and scorer_trace_id are text.
func checkExtraType(field string, v json.RawMessage) error {
	var err error
	want := "a string"
	switch {
	case field == "scorer_tags":
		want, err = "a list of strings", json.Unmarshal(v, new([]string))
	case strings.HasSuffix(field, "_reasons"):
		want, err = "an object of strings", json.Unmarshal(v, new(map[string]string))
	case strings.HasPrefix(field, "scorer_") && field != "scorer_trace_id":
		want, err = "an object of numbers", json.Unmarshal(v, new(map[string]float64))
	default:
		err = json.Unmarshal(v, new(string))
	}
	if err != nil {
		return &wire.FieldError{Field: field, Msg: "must be " + want, Schema: wire.SchemaType}
	}
	return nil
}
