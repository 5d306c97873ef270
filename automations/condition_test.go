package automations

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func TestParseConditionNamesTheBadField(t *testing.T) {
	for _, tc := range []struct {
		name, cond, field string
	}{
		{"missing", ``, "condition"},
		{"not an object", `[1]`, "condition"},
		{"unknown field", `{"metric":"cost","window_seconds":60,"comparator":">","threshold":1,"budget":5}`, "condition"},
		{"unknown metric", `{"metric":"errors","window_seconds":300,"comparator":">","threshold":1}`, "condition.metric"},
		{"window under a minute", `{"metric":"error_rate","window_seconds":59,"comparator":">","threshold":1}`, "condition.window_seconds"},
		{"window over 7 days", `{"metric":"error_rate","window_seconds":604801,"comparator":">","threshold":1}`, "condition.window_seconds"},
		{"unknown comparator", `{"metric":"error_rate","window_seconds":300,"comparator":"==","threshold":1}`, "condition.comparator"},
		{"negative min_calls", `{"metric":"error_rate","window_seconds":300,"comparator":">","threshold":1,"min_calls":-1}`, "condition.min_calls"},
		{"query that does not parse", `{"metric":"call_count","window_seconds":300,"comparator":">","threshold":1,"query":{"$expr":{"$nope":[]}}}`, "condition.query"},
		{"query without $expr", `{"metric":"call_count","window_seconds":300,"comparator":">","threshold":1,"query":{"x":1}}`, "condition.query"},
		{"op_names and filter", `{"metric":"call_count","window_seconds":300,"comparator":">","threshold":1,"op_names":["a"],"filter":{"op_names":["b"]}}`, "condition.op_names"},
		{"empty op name", `{"metric":"call_count","window_seconds":300,"comparator":">","threshold":1,"op_names":[""]}`, "condition.op_names"},
		{"enforce on a non-cost metric", `{"metric":"error_rate","window_seconds":300,"comparator":">","threshold":1,"enforce":true}`, "condition.enforce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCondition(json.RawMessage(tc.cond))
			if !errors.Is(err, storage.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Fatalf("error %v, want invalid argument naming %s", err, tc.field)
			}
		})
	}
}

func TestParseConditionAccepts(t *testing.T) {
	for _, cond := range []string{
		`{"metric":"error_rate","op_names":["chat"],"window_seconds":300,"comparator":">","threshold":0.05,"min_calls":20}`,
		`{"metric":"cost","window_seconds":86400,"comparator":">=","threshold":25,"enforce":true}`,
		`{"metric":"latency_p95_ms","window_seconds":604800,"comparator":"<=","threshold":800,
		  "filter":{"trace_roots_only":true},"query":{"$expr":{"$eq":[{"$getField":"op_name"},{"$literal":"x"}]}}}`,
	} {
		if _, err := ParseCondition(json.RawMessage(cond)); err != nil {
			t.Errorf("%s: %v", cond, err)
		}
	}
}

func TestConditionCallsQuery(t *testing.T) {
	c := Condition{OpNames: []string{"chat", "weave:///acme/app/op/embed:abc"}}
	q, err := c.CallsQuery("acme/app")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"chat", "weave:///acme/app/op/chat:*", "weave:///acme/app/op/embed:abc"}
	if strings.Join(q.Filter.OpNames, " ") != strings.Join(want, " ") || q.ProjectID != "acme/app" {
		t.Fatalf("query = %+v, want op refs %v in acme/app", q, want)
	}
}

func TestStepFiresAndResolvesOnce(t *testing.T) {
	c := Condition{Metric: MetricErrorRate, Comparator: ">", Threshold: 0.05, MinCalls: 20}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := storage.AlertState{ProjectID: "acme/app", AutomationID: "au_1", State: storage.AlertOK, ChangedAt: t0}
	steps := []struct {
		m           Measurement
		state       string
		changed     bool
		seq         int64
		description string
	}{
		{Measurement{Value: 0.5, Calls: 10}, storage.AlertOK, false, 0, "too few calls: holds not"},
		{Measurement{Value: 0.01, Calls: 100}, storage.AlertOK, false, 0, "under the threshold"},
		{Measurement{Value: 0.2, Calls: 100}, storage.AlertFiring, true, 1, "crosses: fires"},
		{Measurement{Value: 0.3, Calls: 100}, storage.AlertFiring, false, 1, "still over: no repeat"},
		{Measurement{Value: 0.05, Calls: 100}, storage.AlertOK, true, 2, "at the threshold of >: resolves"},
		{Measurement{Value: 0, Calls: 0}, storage.AlertOK, false, 2, "no calls"},
	}
	for i, s := range steps {
		now := t0.Add(time.Duration(i+1) * time.Minute)
		next, changed := Step(st, c, s.m, now)
		if next.State != s.state || changed != s.changed || next.Seq != s.seq || next.Value != s.m.Value || !next.EvaluatedAt.Equal(now) {
			t.Fatalf("step %d (%s): %+v changed=%v, want state %s changed=%v seq %d", i, s.description, next, changed, s.state, s.changed, s.seq)
		}
		if changed != next.ChangedAt.Equal(now) {
			t.Fatalf("step %d: changed_at %v, want it moved only on a change", i, next.ChangedAt)
		}
		st = next
	}
}

func TestHoldsComparators(t *testing.T) {
	for _, tc := range []struct {
		cmp  string
		v    float64
		want bool
	}{{">", 2, true}, {">", 1, false}, {">=", 1, true}, {"<", 0.5, true}, {"<", 1, false}, {"<=", 1, true}, {"<=", 1.5, false}} {
		if got := (Condition{Comparator: tc.cmp, Threshold: 1}).Holds(tc.v); got != tc.want {
			t.Errorf("%v %s 1 = %v, want %v", tc.v, tc.cmp, got, tc.want)
		}
	}
}
