package traceapi

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/weftdev/weft/storage"
)

// evalResultsSumRes is EvalResultsSummaryRes.
type evalResultsSumRes struct {
	RowCount    int                `json:"row_count"`
	Evaluations []*evalSummaryEval `json:"evaluations"`
}

// evalSummaryEval is EvalResultsEvaluationSummary.
type evalSummaryEval struct {
	EvaluationCallID   string             `json:"evaluation_call_id"`
	TrialCount         int                `json:"trial_count"`
	ScorerStats        []*evalScorerStats `json:"scorer_stats"`
	PredictTotalTokens *int64             `json:"predict_total_tokens"`
	PredictTotalCost   *float64           `json:"predict_total_cost"`
	EvaluationRef      *string            `json:"evaluation_ref"`
	ModelRef           *string            `json:"model_ref"`
	DisplayName        *string            `json:"display_name"`
	TraceID            *string            `json:"trace_id"`
	StartedAt          *string            `json:"started_at"`
}

// evalScorerStats is EvalResultsScorerStats: one score dimension, a
// scorer's scalar output or one leaf of its object output.
type evalScorerStats struct {
	ScorerKey          string   `json:"scorer_key"`
	Path               *string  `json:"path"`
	ValueType          string   `json:"value_type"`
	TrialCount         int      `json:"trial_count"`
	NumericCount       int      `json:"numeric_count"`
	NumericMean        *float64 `json:"numeric_mean"`
	PassTrueCount      int      `json:"pass_true_count"`
	PassKnownCount     int      `json:"pass_known_count"`
	PassRate           *float64 `json:"pass_rate"`
	PassSignalCoverage *float64 `json:"pass_signal_coverage"`
	sum                float64
}

// summarize aggregates every trial's scores per evaluation and dimension:
// booleans give pass rates, numbers means, strings counts.
func summarize(rows []*evalResultsRow, evalIDs []string, roots map[string]storage.StoredCall) *evalResultsSumRes {
	res := &evalResultsSumRes{RowCount: len(rows), Evaluations: []*evalSummaryEval{}}
	for _, id := range evalIDs {
		ev := &evalSummaryEval{EvaluationCallID: id, ScorerStats: []*evalScorerStats{}}
		stats := map[string]*evalScorerStats{}
		seen := false
		for _, row := range rows {
			e := row.byEval[id]
			if e == nil {
				continue
			}
			seen = true
			for _, t := range e.Trials {
				ev.TrialCount++
				if t.TotalTokens != nil {
					ev.PredictTotalTokens = addInt(ev.PredictTotalTokens, *t.TotalTokens)
				}
				if t.TotalCost != nil {
					ev.PredictTotalCost = addFloat(ev.PredictTotalCost, *t.TotalCost)
				}
				keys := make([]string, 0, len(t.Scores))
				for k := range t.Scores {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					var v any
					dec := json.NewDecoder(bytes.NewReader(t.Scores[k]))
					dec.UseNumber()
					if dec.Decode(&v) == nil {
						addScore(ev, stats, k, nil, v)
					}
				}
			}
		}
		if !seen {
			continue
		}
		for _, s := range ev.ScorerStats {
			if s.PassKnownCount > 0 {
				r := float64(s.PassTrueCount) / float64(s.PassKnownCount)
				s.PassRate = &r
			}
			if s.TrialCount > 0 {
				c := float64(s.PassKnownCount) / float64(s.TrialCount)
				s.PassSignalCoverage = &c
			}
			if s.NumericCount > 0 {
				m := s.sum / float64(s.NumericCount)
				s.NumericMean = &m
			}
		}
		if root, ok := roots[id]; ok {
			fillRootMeta(ev, root)
		}
		res.Evaluations = append(res.Evaluations, ev)
	}
	return res
}

// addScore counts one score value into its dimension, walking objects
// into their leaves (path "a.b"); arrays and nulls count nowhere.
func addScore(ev *evalSummaryEval, stats map[string]*evalScorerStats, key string, path []string, v any) {
	dim := func(kind string) *evalScorerStats {
		p := strings.Join(path, ".")
		id := key + "\x00" + p
		s := stats[id]
		if s == nil {
			s = &evalScorerStats{ScorerKey: key, ValueType: kind}
			if len(path) > 0 {
				s.Path = &p
			}
			stats[id] = s
			ev.ScorerStats = append(ev.ScorerStats, s)
		}
		s.TrialCount++
		return s
	}
	switch v := v.(type) {
	case bool:
		s := dim("binary")
		s.PassKnownCount++
		if v {
			s.PassTrueCount++
		}
	case json.Number:
		if f, err := v.Float64(); err == nil {
			s := dim("continuous")
			s.NumericCount++
			s.sum += f
		}
	case string:
		dim("text")
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			addScore(ev, stats, key, append(path[:len(path):len(path)], k), v[k])
		}
	}
}

// fillRootMeta names the evaluation, the model and the run from the root
// call.
func fillRootMeta(ev *evalSummaryEval, root storage.StoredCall) {
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	self := inputString(root.Call, "self")
	if self == "" {
		self = inputString(root.Call, "this")
	}
	ev.EvaluationRef, ev.ModelRef = str(self), str(inputString(root.Call, "model"))
	ev.DisplayName, ev.TraceID = str(root.DisplayName), str(root.TraceID)
	if !root.StartedAt.IsZero() {
		ev.StartedAt = str(root.StartedAt.UTC().Format("2006-01-02T15:04:05.999999-07:00"))
	}
}

func addFloat(p *float64, n float64) *float64 {
	if p == nil {
		return &n
	}
	*p += n
	return p
}

func addInt(p *int64, n int64) *int64 {
	if p == nil {
		return &n
	}
	*p += n
	return p
}
