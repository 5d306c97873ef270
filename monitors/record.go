package monitors

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
)

// RunnableFeedbackPrefix starts the feedback type of a scorer's verdict,
// as the reference names it: wandb.runnable.<scorer name>.
const RunnableFeedbackPrefix = "wandb.runnable"

// storeVerdict writes a verdict as the reference's scoring worker does:
// a score call (op <scorer>.score, its output the verdict, its usage the
// judge's) and runnable feedback on the scored call pointing at it, the
// scorer and the monitor. Both ids derive from the call and scorer
// version, so writing them again replaces them.
func (r *Runner) storeVerdict(ctx context.Context, t task, out outcome, res *storage.MonitorResult) error {
	verdict := out.verdict
	j := out.judge
	project := t.monitor.ProjectID
	scoreID, feedbackID := scoreIDs(project, t.call.ID, t.scorer)
	callRef := "weave:///" + project + "/call/" + t.call.ID
	scoreRef := "weave:///" + project + "/call/" + scoreID
	_, digest, _ := objectOf(project, t.scorer)
	at := res.At
	ended := r.now().UTC()
	inputs, err := json.Marshal(map[string]any{"self": t.scorer, "output": orNull(t.call.Output), "inputs": orNull(t.call.Inputs)})
	if err != nil {
		return err
	}
	attrs, _ := json.Marshal(map[string]any{scoreMarker: map[string]string{"monitor": t.monitor.Ref, "scored_call": callRef}})
	summary, err := scoreSummary(j.Model, out.usage)
	if err != nil {
		return err
	}
	call := storage.Call{ProjectID: project, ID: scoreID, TraceID: scoreID, OpName: "weave:///" + project + "/op/" + j.Name + ".score:" + digest,
		StartedAt: at, EndedAt: &ended, Attributes: attrs, Inputs: inputs, Output: verdict, Summary: summary, WBUserID: t.monitor.UserID}
	if r.sink != nil {
		if _, err := r.sink.ConsumeCalls(ctx, []storage.CallOp{{Part: &storage.CallPart{Kind: storage.PartComplete, Call: call}}}); err != nil {
			return fmt.Errorf("store the score call: %w", err)
		}
	}
	payload, err := json.Marshal(map[string]json.RawMessage{"output": verdict})
	if err != nil {
		return err
	}
	user := t.monitor.UserID
	if user == "" {
		user = "monitor"
	}
	runnable, trigger := t.scorer, t.monitor.Ref
	fb := storage.Feedback{ID: feedbackID, ProjectID: project, WeaveRef: callRef, WBUserID: user, CreatedAt: at.Truncate(time.Microsecond),
		FeedbackType: RunnableFeedbackPrefix + "." + j.Name, Payload: payload, RunnableRef: &runnable, CallRef: &scoreRef, TriggerRef: &trigger}
	return r.store.CreateFeedback(ctx, []storage.Feedback{fb})
}

// scoreSummary is a score call's summary: the judge's usage under its
// model, as the SDK records an LLM call's, so include_costs prices it.
func scoreSummary(model string, usage json.RawMessage) (json.RawMessage, error) {
	var u map[string]any
	if json.Unmarshal(usage, &u) != nil || u == nil {
		return json.RawMessage(`{}`), nil
	}
	u["requests"] = 1
	return json.Marshal(map[string]any{"usage": map[string]any{model: u}})
}
