package traceapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/refs"
	"github.com/weftdev/weft/storage"
)

// rowRefMarker precedes a dataset row's digest in its ref
// (".../object/<dataset>:<digest>/attr/rows/id/<row digest>").
const rowRefMarker = "/attr/rows/id/"

// evalResultsRes is EvalResultsQueryRes.
type evalResultsRes struct {
	Rows      []*evalResultsRow  `json:"rows"`
	TotalRows int                `json:"total_rows"`
	Summary   *evalResultsSumRes `json:"summary"`
	Warnings  []string           `json:"warnings"`
}

// evalResultsRow is EvalResultsRow: one dataset row and what each
// evaluation made of it.
type evalResultsRow struct {
	RowDigest   string                `json:"row_digest"`
	RawDataRow  json.RawMessage       `json:"raw_data_row"`
	Evaluations []*evalResultsRowEval `json:"evaluations"`
	byEval      map[string]*evalResultsRowEval
	example     json.RawMessage // inputs.example as written, for filters and sorts
}

// evalResultsRowEval is EvalResultsRowEvaluation.
type evalResultsRowEval struct {
	EvaluationCallID string              `json:"evaluation_call_id"`
	Trials           []*evalResultsTrial `json:"trials"`
}

// evalResultsTrial is EvalResultsTrial: one predict_and_score call.
type evalResultsTrial struct {
	PredictAndScoreCallID string                     `json:"predict_and_score_call_id"`
	PredictCallID         *string                    `json:"predict_call_id"`
	ModelOutput           json.RawMessage            `json:"model_output"`
	Scores                map[string]json.RawMessage `json:"scores"`
	ModelLatencySeconds   *float64                   `json:"model_latency_seconds"`
	TotalTokens           *int64                     `json:"total_tokens"`
	TotalCost             *float64                   `json:"total_cost"`
	ScorerCallIDs         map[string]string          `json:"scorer_call_ids"`
	// usage is the summary whose usage the trial's tokens and cost are
	// of (the predict call's, else the row's), started when it started.
	usage     json.RawMessage
	startedAt time.Time
}

// groupEvalRows groups the evaluations' predict_and_score calls by dataset
// row digest, in row digest order (the reference's default order). With
// children, each trial's predict and score calls refine it.
func groupEvalRows(calls []storage.StoredCall, evalIDs []string, withChildren, rawRows bool) []*evalResultsRow {
	isRoot := make(map[string]bool, len(evalIDs))
	for _, id := range evalIDs {
		isRoot[id] = true
	}
	var rowCalls []*storage.StoredCall
	rowIDs := map[string]bool{}
	for i := range calls {
		c := &calls[i]
		if isRoot[c.ParentID] && opIs(c.OpName, predictAndScoreOp) {
			rowCalls = append(rowCalls, c)
			rowIDs[c.ID] = true
		}
	}
	children := map[string][]*storage.StoredCall{}
	if withChildren {
		for i := range calls {
			if c := &calls[i]; rowIDs[c.ParentID] {
				children[c.ParentID] = append(children[c.ParentID], c)
			}
		}
	}
	byDigest := map[string]*evalResultsRow{}
	var rows []*evalResultsRow
	for _, c := range rowCalls {
		example := jsonMember(c.Inputs, "example")
		d := rowDigest(example)
		row := byDigest[d]
		if row == nil {
			row = &evalResultsRow{RowDigest: d, byEval: map[string]*evalResultsRowEval{}, example: example}
			byDigest[d] = row
			rows = append(rows, row)
		}
		if rawRows && row.RawDataRow == nil {
			row.RawDataRow = example
		}
		ev := row.byEval[c.ParentID]
		if ev == nil {
			ev = &evalResultsRowEval{EvaluationCallID: c.ParentID}
			row.byEval[c.ParentID] = ev
		}
		ev.Trials = append(ev.Trials, buildTrial(c, children[c.ID]))
	}
	for _, row := range rows {
		// Evaluations in request order, so every row lists them alike.
		for _, id := range evalIDs {
			if ev := row.byEval[id]; ev != nil {
				row.Evaluations = append(row.Evaluations, ev)
			}
		}
	}
	sortByDigest(rows)
	return rows
}

// rowDigest is the dataset row's digest: the one its row ref names, else
// the digest of the inline example (a string's own bytes, any other value
// its sorted-keys JSON text).
func rowDigest(example json.RawMessage) string {
	var s string
	if json.Unmarshal(example, &s) == nil {
		if i := strings.LastIndex(s, rowRefMarker); i >= 0 && strings.HasPrefix(s, "weave") {
			if d := s[i+len(rowRefMarker):]; d != "" && !strings.Contains(d, "/") {
				return d
			}
		}
		return digest.StrDigest(s)
	}
	if example == nil {
		example = json.RawMessage("null")
	}
	if d, err := digest.ObjectDigest(example); err == nil {
		return d
	}
	return digest.BytesDigest(example)
}

// buildTrial reads one predict_and_score call: the model's output and the
// scores from its output, scores logged later from its scorer children,
// and latency and tokens from its predict child when there is one.
func buildTrial(c *storage.StoredCall, children []*storage.StoredCall) *evalResultsTrial {
	var out struct {
		Output       json.RawMessage            `json:"output"`
		Scores       map[string]json.RawMessage `json:"scores"`
		ModelLatency json.RawMessage            `json:"model_latency"`
	}
	_ = json.Unmarshal(c.Output, &out)
	t := &evalResultsTrial{PredictAndScoreCallID: c.ID, ModelOutput: nullIfEmpty(out.Output),
		Scores: map[string]json.RawMessage{}, ScorerCallIDs: map[string]string{}}
	for k, v := range out.Scores {
		t.Scores[k] = v
	}
	model := jsonMemberString(c.Inputs, "model")
	var scorers []*storage.StoredCall
	var predict *storage.StoredCall
	for _, child := range children {
		if isScorerCall(child, t.Scores) {
			scorers = append(scorers, child)
			// A scorer's call is "<scorer>" (a function scorer) or
			// "<scorer>.score" (a Scorer class); its score is under
			// "<scorer>" either way.
			if key := strings.TrimSuffix(wireOpName(child.OpName), scoreSuffix); key != "" {
				if _, ok := t.Scores[key]; !ok {
					t.Scores[key] = nullIfEmpty(child.Output)
				}
			}
			continue
		}
		if predict == nil && isPredictCall(child, model) {
			predict = child
		}
	}
	for key := range t.Scores {
		lower := strings.ToLower(key)
		for _, s := range scorers {
			op := strings.ToLower(wireOpName(s.OpName))
			if strings.Contains(op, lower) || strings.Contains(lower, op) {
				t.ScorerCallIDs[key] = s.ID
				break
			}
		}
	}
	usageOf, startedAt := c.Summary, c.StartedAt
	if predict != nil {
		id := predict.ID
		t.PredictCallID = &id
		usageOf, startedAt = predict.Summary, predict.StartedAt
		if predict.EndedAt != nil && !predict.StartedAt.IsZero() {
			s := predict.EndedAt.Sub(predict.StartedAt).Seconds()
			t.ModelLatencySeconds = &s
		}
	}
	if t.ModelLatencySeconds == nil {
		t.ModelLatencySeconds = latencyOf(out.ModelLatency)
	}
	t.TotalTokens = totalTokens(usageOf)
	t.usage, t.startedAt = usageOf, startedAt
	return t
}

// isScorerCall reports whether a child of a row is a scorer's call: marked
// a score (by the runs API or the SDK's eval metadata), named like one, or
// named after a key of the row's scores.
func isScorerCall(c *storage.StoredCall, scores map[string]json.RawMessage) bool {
	var attrs struct {
		Weave struct {
			Score any `json:"score"`
		} `json:"weave"`
		EvalMeta struct {
			Score any `json:"score"`
		} `json:"_weave_eval_meta"`
	}
	_ = json.Unmarshal(c.Attributes, &attrs)
	if attrs.Weave.Score == marked || truthy(attrs.EvalMeta.Score) {
		return true
	}
	op := strings.ToLower(c.OpName)
	if strings.Contains(op, scoreSuffix) || strings.Contains(op, "scorer") {
		return true
	}
	_, named := scores[wireOpName(c.OpName)]
	return named
}

// isPredictCall reports whether a (non-scorer) child of a row is the
// model's call: called on the model, the model's own op (a function
// model), or named like a predict.
func isPredictCall(c *storage.StoredCall, model string) bool {
	if model != "" && (c.OpName == model || jsonMemberString(c.Inputs, "self") == model) {
		return true
	}
	op := strings.ToLower(c.OpName)
	return strings.Contains(op, "predict") || strings.Contains(op, "invoke")
}

// wireOpName is the op's name without its ref: "exact_match" for
// "weave:///e/p/op/exact_match:digest".
func wireOpName(op string) string {
	op = op[strings.LastIndexByte(op, '/')+1:]
	name, _, _ := strings.Cut(op, ":")
	return name
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	case map[string]any:
		return len(v) > 0
	}
	return false
}

// latencyOf reads output.model_latency: {"mean": s} as the summary of a
// row writes it, or a plain number of seconds.
func latencyOf(raw json.RawMessage) *float64 {
	var n float64
	if json.Unmarshal(raw, &n) == nil && len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		return &n
	}
	var m struct {
		Mean *float64 `json:"mean"`
	}
	if json.Unmarshal(raw, &m) == nil {
		return m.Mean
	}
	return nil
}

// totalTokens sums total_tokens over summary.usage's models; nil when no
// model reports it.
func totalTokens(summary json.RawMessage) *int64 {
	var s struct {
		Usage map[string]struct {
			TotalTokens *float64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(summary, &s) != nil {
		return nil
	}
	var total int64
	found := false
	for _, u := range s.Usage {
		if u.TotalTokens != nil {
			total += int64(*u.TotalTokens)
			found = true
		}
	}
	if !found {
		return nil
	}
	return &total
}

// jsonMember is one member of a JSON object, nil when absent or null; it
// scans rather than decodes, as a comparison reads thousands of calls.
func jsonMember(raw json.RawMessage, key string) json.RawMessage {
	v, ok := refs.ObjectMember(raw, key)
	if !ok || bytes.Equal(v, []byte("null")) {
		return nil
	}
	return v
}

// jsonMemberString is a string member of a JSON object, "" when absent.
func jsonMemberString(raw json.RawMessage, key string) string {
	var s string
	if v := jsonMember(raw, key); len(v) > 0 && v[0] == '"' {
		_ = json.Unmarshal(v, &s)
	}
	return s
}

func nullIfEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return raw
}

// intersect keeps the rows every evaluation scored when within is set and
// more than one evaluation is compared.
func intersect(rows []*evalResultsRow, evalIDs []string, within bool) []*evalResultsRow {
	if !within || len(evalIDs) < 2 {
		return rows
	}
	out := make([]*evalResultsRow, 0, len(rows))
	for _, row := range rows {
		if len(row.byEval) == len(evalIDs) {
			out = append(out, row)
		}
	}
	return out
}
