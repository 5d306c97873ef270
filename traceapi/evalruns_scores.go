package traceapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

// scoreReadRes is ScoreReadRes.
type scoreReadRes struct {
	ScoreID         string  `json:"score_id"`
	Scorer          string  `json:"scorer"`
	Value           pyFloat `json:"value"`
	EvaluationRunID *string `json:"evaluation_run_id"`
	WBUserID        *string `json:"wb_user_id"`
}

// scoreInputs are the inputs of a score's call, as a scorer's are: the
// prediction's inputs and output.
type scoreInputs struct {
	Self   string          `json:"self"`
	Inputs json.RawMessage `json:"inputs"`
	Output json.RawMessage `json:"output"`
}

func isScore(c storage.Call) bool { return marksOf(c)["score"] == marked }

// scoreRes renders a score's call; a value that is no number reads as 0.
func scoreRes(sc storage.StoredCall) any {
	m := marksOf(sc.Call)
	var value float64
	_ = json.Unmarshal(sc.Output, &value)
	return scoreReadRes{ScoreID: sc.ID, Scorer: m["scorer"], Value: pyFloat(value),
		EvaluationRunID: optionalString(m["evaluation_run_id"]), WBUserID: optionalString(sc.WBUserID)}
}

// scorerRef parses a score's scorer: an object ref into the project.
func scorerRef(projectID, scorer string) (refs.Ref, error) {
	r, err := refs.Parse(scorer)
	if err != nil || r.Scheme != refs.SchemeWeave || r.Kind != refs.KindObject {
		return r, &wire.FieldError{Field: "scorer", Msg: fmt.Sprintf("%q is not a scorer ref; use weave:///%s/object/<name>:<digest>", scorer, projectID)}
	}
	if r.ProjectID != projectID {
		return r, &wire.FieldError{Field: "scorer", Msg: fmt.Sprintf("points into project %q, not %q", r.ProjectID, projectID)}
	}
	return r, nil
}

// scoreCreate records a scorer's value for a prediction as a finished
// "<scorer>.score" call: given a run, beside the prediction under its
// predict_and_score call (or under the run itself), else the root of its
// own trace. As in the reference, the value is also left on the
// prediction's call as runnable feedback, which is where the UI shows it.
func (a *EvaluationRunsAPI) scoreCreate(r *http.Request, body []byte) (any, error) {
	var predID, scorer, runID string
	var value *float64
	err := wire.DecodeTop(body, wire.Fields{"prediction_id": &predID, "scorer": &scorer, "value": &value,
		"evaluation_run_id": &runID}, "prediction_id", "scorer", "value")
	for _, f := range []struct{ name, id string }{{"prediction_id", predID}, {"evaluation_run_id", runID}} {
		if err == nil {
			err = wire.CheckID(f.name, f.id)
		}
	}
	if err != nil {
		return nil, err
	}
	projectID, p, err := pathProject(r, auth.Write)
	if err != nil {
		return nil, err
	}
	ref, err := scorerRef(projectID, scorer)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	pred, err := a.readPrediction(ctx, projectID, predID)
	if err != nil {
		return nil, err
	}
	id := newCallID()
	call := evalCall{id: id, traceID: id,
		attributes: weaveAttrs(scoreMarks{Score: marked, PredictionID: predID, Scorer: scorer, EvaluationRunID: runID}),
		inputs:     scoreInputs{Self: scorer, Inputs: orEmptyObject(inputValue(pred.Call, "inputs")), Output: orJSONNull(pred.Output)}}
	if runID != "" {
		run, err := a.readRun(ctx, projectID, runID)
		if err != nil {
			return nil, err
		}
		call.traceID, call.parentID = run.TraceID, firstNonEmpty(pred.ParentID, runID)
	}
	if call.opName, err = a.opRef(ctx, projectID, p.UserID, ref.Name+scoreSuffix, scoreSource); err != nil {
		return nil, err
	}
	output, err := marshalJSON(pyFloat(*value))
	if err != nil {
		return nil, err
	}
	now := a.stamp()
	op, err := completeOp(projectID, p.UserID, call, now, now, output)
	if err != nil {
		return nil, err
	}
	if _, err := a.write(ctx, op); err != nil {
		return nil, err
	}
	payload, err := marshalJSON(map[string]json.RawMessage{"output": output})
	if err != nil {
		return nil, err
	}
	row, err := a.rules.row(feedbackReq{ProjectID: projectID, WeaveRef: "weave:///" + projectID + "/call/" + predID,
		FeedbackType: runnablePrefix + "." + ref.Name, Payload: payload, RunnableRef: &scorer},
		firstNonEmpty(p.UserID, pred.WBUserID, "unknown"))
	if err != nil {
		return nil, err
	}
	if err := a.stores.Feedback.CreateFeedback(ctx, []storage.Feedback{row}); err != nil {
		return nil, err
	}
	return map[string]string{"score_id": id}, nil
}

func orEmptyObject(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("{}")
	}
	return v
}

func orJSONNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

func (a *EvaluationRunsAPI) scoreRead(r *http.Request, _ []byte) (any, error) {
	id, err := pathID(r, "score_id")
	if err != nil {
		return nil, err
	}
	projectID, _, err := pathProject(r, auth.Read)
	if err != nil {
		return nil, err
	}
	c, ok, err := a.readCall(r.Context(), projectID, id)
	if err != nil {
		return nil, err
	}
	if !ok || !isScore(c.Call) {
		return nil, notFound("Score", id)
	}
	return scoreRes(c), nil
}

// scoreQuery lists the calls marked as scores, of one run when
// evaluation_run_id is given.
func (a *EvaluationRunsAPI) scoreQuery(r *http.Request) (storage.CallsQuery, error) {
	return markedOfRun(r, "score")
}

func (a *EvaluationRunsAPI) scoreDelete(r *http.Request, _ []byte) (any, error) {
	return a.deleteCalls(r, "score_ids")
}
