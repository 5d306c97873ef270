package automations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// Alert metrics: what a condition measures over its window.
const (
	MetricCallCount    = "call_count"
	MetricErrorCount   = "error_count"
	MetricErrorRate    = "error_rate"
	MetricLatencyP50   = "latency_p50_ms"
	MetricLatencyP95   = "latency_p95_ms"
	MetricLatencyP99   = "latency_p99_ms"
	MetricTotalTokens  = "total_tokens"
	MetricCost         = "cost"
	MinWindowSeconds   = 60
	MaxWindowSeconds   = 7 * 24 * 3600
	maxConditionOpName = 64
)

var (
	alertMetrics = []string{MetricCallCount, MetricErrorCount, MetricErrorRate, MetricLatencyP50, MetricLatencyP95,
		MetricLatencyP99, MetricTotalTokens, MetricCost}
	comparators = []string{">", ">=", "<", "<="}
)

// Condition is what a CALL_ALERT automation watches: Metric over the
// calls of the trailing window (those of OpNames, or of Filter and
// Query as /calls/stream_query takes them) compared with Threshold. With
// fewer than MinCalls calls in the window it does not hold. Enforce asks
// the inference gateway to refuse the project's requests while it fires
// (a budget that holds).
type Condition struct {
	Metric        string            `json:"metric"`
	OpNames       []string          `json:"op_names,omitempty"`
	Filter        *wire.CallsFilter `json:"filter,omitempty"`
	Query         json.RawMessage   `json:"query,omitempty"`
	WindowSeconds int64             `json:"window_seconds"`
	Comparator    string            `json:"comparator"`
	Threshold     float64           `json:"threshold"`
	MinCalls      int64             `json:"min_calls,omitempty"`
	Enforce       bool              `json:"enforce,omitempty"`
}

// ParseCondition reads and checks a condition: every bad field is
// ErrInvalidArgument naming it (condition.<field>) and the fix.
func ParseCondition(raw json.RawMessage) (Condition, error) {
	var c Condition
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return c, invalid("condition", "required for CALL_ALERT: {metric, window_seconds, comparator, threshold}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, invalid("condition", "%v; fields are metric, op_names, filter, query, window_seconds, comparator, threshold, min_calls, enforce", err)
	}
	return c, c.Check()
}

// Check applies the condition's rules.
func (c Condition) Check() error {
	switch {
	case !slices.Contains(alertMetrics, c.Metric):
		return invalid("condition.metric", "%q is not one of %s", c.Metric, strings.Join(alertMetrics, ", "))
	case c.WindowSeconds < MinWindowSeconds || c.WindowSeconds > MaxWindowSeconds:
		return invalid("condition.window_seconds", "must be between %d (a minute) and %d (7 days), got %d",
			MinWindowSeconds, MaxWindowSeconds, c.WindowSeconds)
	case !slices.Contains(comparators, c.Comparator):
		return invalid("condition.comparator", "%q is not one of %s", c.Comparator, strings.Join(comparators, " "))
	case math.IsNaN(c.Threshold) || math.IsInf(c.Threshold, 0):
		return invalid("condition.threshold", "must be a finite number")
	case c.MinCalls < 0:
		return invalid("condition.min_calls", "must not be negative")
	case len(c.OpNames) > 0 && c.Filter != nil:
		return invalid("condition.op_names", "give op_names or filter.op_names, not both")
	case c.Enforce && c.Metric != MetricCost:
		return invalid("condition.enforce", "only a cost condition (a budget) can be enforced")
	}
	for _, name := range c.OpNames {
		if err := checkName("condition.op_names", name); err != nil {
			return err
		}
	}
	if _, err := querylang.DefaultLimits().Parse(c.queryDoc()); err != nil {
		return invalid("condition.query", "%v", err)
	}
	return nil
}

// queryDoc is the query, nil without one.
func (c Condition) queryDoc() json.RawMessage {
	if len(c.Query) == 0 || string(c.Query) == "null" {
		return nil
	}
	return c.Query
}

// CallsQuery is the calls a condition measures in project: a bare op
// name matches calls recorded under that name (OTLP spans) and every
// version of the project's op of that name (Weave SDK calls); a full op
// ref (weave:///...) is taken as it is.
func (c Condition) CallsQuery(projectID string) (storage.CallsQuery, error) {
	q := storage.CallsQuery{ProjectID: projectID}
	if c.Filter != nil {
		q.Filter = c.Filter.Storage()
	}
	for _, name := range c.OpNames {
		q.Filter.OpNames = append(q.Filter.OpNames, name)
		if !strings.HasPrefix(name, "weave:///") {
			q.Filter.OpNames = append(q.Filter.OpNames, fmt.Sprintf("weave:///%s/op/%s:*", projectID, name))
		}
	}
	var err error
	q.Where, err = querylang.DefaultLimits().Parse(c.queryDoc())
	return q, err
}

// Holds reports whether value compared with the threshold is true.
func (c Condition) Holds(value float64) bool {
	switch c.Comparator {
	case ">":
		return value > c.Threshold
	case ">=":
		return value >= c.Threshold
	case "<":
		return value < c.Threshold
	case "<=":
		return value <= c.Threshold
	}
	return false
}
