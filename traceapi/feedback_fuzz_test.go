package traceapi

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/emoji"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// FuzzFeedbackRequest feeds arbitrary bodies through decoding and the type
// rules: every failure must be a bad-input error, every success a row with
// a JSON object payload inside the size limit.
func FuzzFeedbackRequest(f *testing.F) {
	f.Add(`{"project_id":"e/p","weave_ref":"weave:///e/p/call/c","feedback_type":"wandb.reaction.1","payload":{"emoji":"👍🏽"}}`)
	f.Add(`{"project_id":"e/p","weave_ref":"weave:///e/p/call/c","feedback_type":"wandb.runnable.x","runnable_ref":"weave:///e/p/op/x:1","payload":{"output":1}}`)
	f.Add(`{"project_id":"e/p","weave_ref":"weave:///e/p/call/c","feedback_type":"wandb.annotation.a","annotation_ref":"weave:///e/p/object/a:1","payload":{"value":[]}}`)
	table, err := emoji.New()
	if err != nil {
		f.Fatal(err)
	}
	rules := feedbackRules{emoji: table, now: time.Now}
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeFeedbackReq([]byte(body), nil)
		if err != nil {
			return
		}
		row, err := rules.row(req, "u")
		if err != nil {
			var fe *wire.FieldError
			if !errors.Is(err, storage.ErrInvalidArgument) && !errors.As(err, &fe) {
				t.Fatalf("rule error %v is not a bad-input error", err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(row.Payload, &obj) != nil || len(row.Payload) > storage.MaxFeedbackPayloadBytes || row.ID == "" {
			t.Fatalf("accepted row %+v", row)
		}
	})
}

func FuzzCostsAndPurge(f *testing.F) {
	f.Add(`{"m":{"prompt_token_cost":1,"completion_token_cost":2}}`, `{"$expr":{"$in":[{"$getField":"id"},[{"$literal":"a"}]]}}`)
	f.Add(`{"a":{},"b":[]}`, `{"$expr":{"$or":[{"$eq":[{"$getField":"id"},{"$literal":"a"}]}]}}`)
	f.Fuzz(func(t *testing.T, costs, query string) {
		if ids, inputs, err := decodeCosts(json.RawMessage(costs)); err == nil {
			for i := range ids {
				if inputs[i].PromptTokenCost == nil || *inputs[i].PromptTokenCost < 0 {
					t.Fatalf("accepted %s", costs)
				}
			}
		}
		expr, err := querylang.Parse(json.RawMessage(query))
		if err != nil {
			return
		}
		if ids, ok := purgeIDs(expr, true); ok && len(ids) == 0 {
			t.Fatalf("purge of no ids accepted: %s", query)
		}
	})
}
