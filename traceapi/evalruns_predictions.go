package traceapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// predictionReadRes is PredictionReadRes.
type predictionReadRes struct {
	PredictionID    string          `json:"prediction_id"`
	Model           string          `json:"model"`
	Inputs          json.RawMessage `json:"inputs"`
	Output          json.RawMessage `json:"output"`
	EvaluationRunID *string         `json:"evaluation_run_id"`
	WBUserID        *string         `json:"wb_user_id"`
}

// predictionInputs are the inputs of a prediction's call.
type predictionInputs struct {
	Self   string          `json:"self"`
	Inputs json.RawMessage `json:"inputs"`
}

// predictAndScoreInputs are the inputs of the predict_and_score call a
// prediction of a run sits under, as Evaluation.predict_and_score's are.
type predictAndScoreInputs struct {
	Self    json.RawMessage `json:"self"`
	Model   string          `json:"model"`
	Example json.RawMessage `json:"example"`
}

// predictAndScoreOutput is the output predict_and_score ends with.
type predictAndScoreOutput struct {
	Output       json.RawMessage     `json:"output"`
	Scores       *jsonObject         `json:"scores"`
	ModelLatency *map[string]pyFloat `json:"model_latency"`
}

func isPrediction(c storage.Call) bool { return marksOf(c)["prediction"] == marked }

func predictionRes(sc storage.StoredCall) any {
	c, m := sc.Call, marksOf(sc.Call)
	return predictionReadRes{PredictionID: c.ID, Model: m["model"], Inputs: orEmptyObject(inputValue(c, "inputs")), Output: orJSONNull(c.Output),
		EvaluationRunID: optionalString(m["evaluation_run_id"]), WBUserID: optionalString(c.WBUserID)}
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// predictionCreate records a model's prediction as a finished
// "<model>.predict" call. Given a run, it is placed as the SDK's
// Evaluation.evaluate places a row: under a new predict_and_score call,
// a child of the run that runs until the prediction is finished.
func (a *EvaluationRunsAPI) predictionCreate(r *http.Request, body []byte) (any, error) {
	var model, runID string
	var inputs, output json.RawMessage
	err := wire.DecodeTop(body, wire.Fields{"model": &model, "inputs": &inputs, "output": &output,
		"evaluation_run_id": &runID}, "model", "inputs")
	if err == nil {
		err = wire.MustBeObject("inputs", inputs)
	}
	if err == nil {
		err = wire.CheckID("evaluation_run_id", runID)
	}
	if err != nil {
		return nil, err
	}
	projectID, p, err := pathProject(r, auth.Write)
	if err != nil {
		return nil, err
	}
	ctx, started := r.Context(), a.stamp()
	id := newCallID()
	call := evalCall{id: id, traceID: id,
		attributes: weaveAttrs(predictionMarks{Prediction: marked, Model: model, EvaluationRunID: runID}),
		inputs:     predictionInputs{Self: model, Inputs: inputs}}
	var ops []storage.CallOp
	if runID != "" {
		row, err := a.startRow(ctx, projectID, p.UserID, runID, id, model, inputs, started)
		if err != nil {
			return nil, err
		}
		ops = append(ops, row)
		call.traceID, call.parentID = row.Part.Call.TraceID, row.Part.Call.ID
	}
	if call.opName, err = a.opRef(ctx, projectID, p.UserID, modelOpName(model), predictSource); err != nil {
		return nil, err
	}
	pred, err := completeOp(projectID, p.UserID, call, started, a.stamp(), output)
	if err != nil {
		return nil, err
	}
	if _, err := a.write(ctx, append(ops, pred)...); err != nil {
		return nil, err
	}
	return map[string]string{"prediction_id": id}, nil
}

// startRow is the start of the predict_and_score call prediction predID
// of run runID sits under.
func (a *EvaluationRunsAPI) startRow(ctx context.Context, projectID, userID, runID, predID, model string, example json.RawMessage, at time.Time) (storage.CallOp, error) {
	run, err := a.readRun(ctx, projectID, runID)
	if err != nil {
		return storage.CallOp{}, err
	}
	op, err := a.opRef(ctx, projectID, userID, predictAndScoreOp, predictAndScoreSource)
	if err != nil {
		return storage.CallOp{}, err
	}
	return startOp(projectID, userID, evalCall{id: newCallID(), traceID: run.TraceID, parentID: runID, opName: op,
		attributes: weaveAttrs(predictAndScoreMarks{PredictCallID: predID}),
		inputs:     predictAndScoreInputs{Self: inputValue(run.Call, "self"), Model: model, Example: example}}, at)
}

// readPrediction reads the prediction id names; 404 when it names none.
func (a *EvaluationRunsAPI) readPrediction(ctx context.Context, projectID, id string) (storage.StoredCall, error) {
	c, ok, err := a.readCall(ctx, projectID, id)
	if err != nil {
		return c, err
	}
	if !ok || !isPrediction(c.Call) {
		return c, notFound("Prediction", id)
	}
	return c, nil
}

func (a *EvaluationRunsAPI) predictionRead(r *http.Request, _ []byte) (any, error) {
	id, err := pathID(r, "prediction_id")
	if err != nil {
		return nil, err
	}
	projectID, _, err := pathProject(r, auth.Read)
	if err != nil {
		return nil, err
	}
	c, err := a.readPrediction(r.Context(), projectID, id)
	if err != nil {
		return nil, err
	}
	return predictionRes(c), nil
}

// predictionQuery lists the calls marked as predictions, of one run when
// evaluation_run_id is given.
func (a *EvaluationRunsAPI) predictionQuery(r *http.Request) (storage.CallsQuery, error) {
	return markedOfRun(r, "prediction")
}

// markedOfRun is the query for calls marked kind, of the run the
// evaluation_run_id parameter names, if any.
func markedOfRun(r *http.Request, kind string) (storage.CallsQuery, error) {
	where := &querylang.And{Operands: []querylang.Expr{markIs(kind, marked)}}
	if runID := r.URL.Query().Get("evaluation_run_id"); runID != "" {
		if err := wire.CheckID("evaluation_run_id", runID); err != nil {
			return storage.CallsQuery{}, err
		}
		where.Operands = append(where.Operands, markIs("evaluation_run_id", runID))
	}
	return storage.CallsQuery{Where: where}, nil
}

func (a *EvaluationRunsAPI) predictionDelete(r *http.Request, _ []byte) (any, error) {
	return a.deleteCalls(r, "prediction_ids")
}

// predictionFinish closes a prediction's row: the predict_and_score call
// above it (if the prediction belongs to a run) ends with the
// prediction's output, its scores by scorer name and the model's latency,
// as the SDK's row does. The prediction's call itself ended when it was
// created; it is ended here only if it is still running.
func (a *EvaluationRunsAPI) predictionFinish(r *http.Request, _ []byte) (any, error) {
	id, err := pathID(r, "prediction_id")
	if err != nil {
		return nil, err
	}
	projectID, _, err := pathProject(r, auth.Write)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	pred, err := a.readPrediction(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	now := a.stamp()
	var ops []storage.CallOp
	if pred.EndedAt == nil {
		end, err := endOp(projectID, id, now, pred.Output, nil)
		if err != nil {
			return nil, err
		}
		ops = append(ops, end)
	}
	if pred.ParentID != "" {
		rowEnd, ok, err := a.endRow(ctx, projectID, pred, now)
		if err != nil {
			return nil, err
		}
		if ok {
			ops = append(ops, rowEnd)
		}
	}
	if len(ops) > 0 {
		if _, err := a.write(ctx, ops...); err != nil {
			return nil, err
		}
	}
	return map[string]bool{"success": true}, nil
}

// endRow is the end of pred's parent when that is a predict_and_score
// call; ok is false when it is not.
func (a *EvaluationRunsAPI) endRow(ctx context.Context, projectID string, pred storage.StoredCall, at time.Time) (op storage.CallOp, ok bool, err error) {
	row, found, err := a.readCall(ctx, projectID, pred.ParentID)
	if err != nil || !found || !opIs(row.OpName, predictAndScoreOp) {
		return op, false, err
	}
	out := predictAndScoreOutput{Output: orJSONNull(pred.Output), Scores: &jsonObject{vals: map[string]any{}}}
	q := storage.CallsQuery{ProjectID: projectID, Filter: storage.CallsFilter{ParentIDs: []string{row.ID}},
		Where: markIs("score", marked), Columns: []string{"id", "attributes", "output"}}
	for c, err := range a.calls.QueryCalls(ctx, q) {
		if err != nil {
			return op, false, err
		}
		if len(c.Output) > 0 {
			out.Scores.set(scoreKey(marksOf(c.Call)["scorer"]), c.Output)
		}
	}
	if pred.EndedAt != nil {
		latency := map[string]pyFloat{"mean": pyFloat(pred.EndedAt.Sub(pred.StartedAt).Seconds())}
		out.ModelLatency = &latency
	}
	output, err := marshalJSON(out)
	if err != nil {
		return op, false, err
	}
	op, err = endOp(projectID, row.ID, at, output, nil)
	return op, err == nil, err
}
