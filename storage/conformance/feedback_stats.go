package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// feedbackStatsStore is what the feedback statistics cases need.
type feedbackStatsStore interface {
	storage.FeedbackStore
	storage.FeedbackAnalyzer
}

// runFeedbackStats runs every feedback statistics case against stores
// made by newStore.
func runFeedbackStats(t *testing.T, newStore func(t *testing.T) feedbackStatsStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s feedbackStatsStore)
	}{
		{"BucketsAndWindow", testFeedbackStatsBuckets},
		{"Filters", testFeedbackStatsFilters},
		{"AggregateGroups", testFeedbackAggregateGroups},
		{"AggregateFilters", testFeedbackAggregateFilters},
		{"AggregateRollupOfNothing", testFeedbackAggregateEmpty},
		{"PayloadSamples", testFeedbackSamples},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// hour0 is the start of the hour of base; the stats rows lie in the
// three hours from it.
var hour0 = base.Truncate(time.Hour)

func statsQuery(metrics []storage.FeedbackMetric, stats ...storage.FeedbackStat) storage.FeedbackStatsQuery {
	return storage.FeedbackStatsQuery{
		FeedbackFilter: storage.FeedbackFilter{ProjectID: "e/p", Start: hour0, End: hour0.Add(3 * time.Hour)},
		Metrics:        metrics, Stats: stats, Origin: hour0, BucketSeconds: 3600,
	}
}

func seedStatsFeedback(t *testing.T, s storage.FeedbackStore) {
	mon := func(f storage.Feedback, trigger string) storage.Feedback { f.TriggerRef = &trigger; return f }
	createFeedback(t, s,
		mon(fb("e/p", "a", callRef("e/p", "c1"), "wandb.runnable.judge", `{"output":{"score":0.5,"passed":true,"label":"good"}}`, hour0.Add(time.Minute)), "weave:///e/p/object/mon:v1"),
		mon(fb("e/p", "b", callRef("e/p", "c2"), "wandb.runnable.judge", `{"output":{"score":1.5,"passed":false,"label":"bad"}}`, hour0.Add(2*time.Minute)), "weave:///e/p/object/mon:v2"),
		mon(fb("e/p", "c", callRef("e/p", "c3"), "wandb.runnable.judge", `{"output":{"score":"0.7","passed":"yes","label":3}}`, hour0.Add(3*time.Minute)), "weave:///e/p/object/other:v1"),
		// The second hour is empty; the third holds one row.
		fb("e/p", "d", callRef("e/p", "c4"), "custom", `{"output":{"score":4,"passed":true,"Low quality":{"confidence":0.9}}}`, hour0.Add(2*time.Hour+time.Minute)),
		// Out of range, and another project's: never counted.
		fb("e/p", "late", callRef("e/p", "c5"), "custom", `{"output":{"score":100}}`, hour0.Add(3*time.Hour)),
		fb("e/q", "other", callRef("e/q", "c1"), "custom", `{"output":{"score":100}}`, hour0.Add(time.Minute)))
}

func f64(v float64) *float64 { return &v }

func floats(vals []*float64) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

// testFeedbackStatsBuckets: each statistic reads its value type only,
// per bucket with rows and over the window.
func testFeedbackStatsBuckets(t *testing.T, s feedbackStatsStore) {
	seedStatsFeedback(t, s)
	metrics := []storage.FeedbackMetric{
		{Path: []string{"output", "score"}, Type: storage.FeedbackNumeric},
		{Path: []string{"output", "passed"}, Type: storage.FeedbackBoolean},
		{Path: []string{"output", "label"}, Type: storage.FeedbackCategorical},
		{Path: []string{"output", "Low quality", "confidence"}, Type: storage.FeedbackNumeric},
	}
	q := statsQuery(metrics,
		storage.FeedbackStat{Metric: 0, Func: storage.StatAvg}, storage.FeedbackStat{Metric: 0, Func: storage.StatMin},
		storage.FeedbackStat{Metric: 0, Func: storage.StatMax}, storage.FeedbackStat{Metric: 0, Func: storage.StatSum},
		storage.FeedbackStat{Metric: 0, Func: storage.StatCount}, storage.FeedbackStat{Metric: 0, Func: storage.StatQuantile, Level: 0.5},
		storage.FeedbackStat{Metric: 1, Func: storage.StatCountTrue}, storage.FeedbackStat{Metric: 1, Func: storage.StatCountFalse},
		storage.FeedbackStat{Metric: 2, Func: storage.StatCount}, storage.FeedbackStat{Metric: 3, Func: storage.StatMax})
	res, err := s.FeedbackStats(context.Background(), q)
	if err != nil {
		t.Fatalf("FeedbackStats: %v", err)
	}
	if len(res.Buckets) != 2 || res.Buckets[0].Index != 0 || res.Buckets[1].Index != 2 {
		t.Fatalf("buckets %+v, want indexes 0 and 2", res.Buckets)
	}
	if res.Buckets[0].Count != 3 || res.Buckets[1].Count != 1 {
		t.Errorf("bucket counts %d, %d, want 3, 1", res.Buckets[0].Count, res.Buckets[1].Count)
	}
	// The string "0.7", the string "yes" and the number 3 are of other
	// types than asked for, and skipped.
	want0 := []any{1.0, 0.5, 1.5, 2.0, 2.0, 1.0, 1.0, 1.0, 2.0, nil}
	if got := floats(res.Buckets[0].Values); !reflect.DeepEqual(got, want0) {
		t.Errorf("first hour\n got %v\nwant %v", got, want0)
	}
	want2 := []any{4.0, 4.0, 4.0, 4.0, 1.0, 4.0, 1.0, 0.0, 0.0, 0.9}
	if got := floats(res.Buckets[1].Values); !reflect.DeepEqual(got, want2) {
		t.Errorf("third hour\n got %v\nwant %v", got, want2)
	}
	wantWindow := []any{2.0, 0.5, 4.0, 6.0, 3.0, 1.5, 2.0, 1.0, 2.0, 0.9}
	if got := floats(res.Window); !reflect.DeepEqual(got, wantWindow) {
		t.Errorf("window\n got %v\nwant %v", got, wantWindow)
	}
	// A statistic that does not apply to its type is refused.
	_, err = s.FeedbackStats(context.Background(), statsQuery(metrics, storage.FeedbackStat{Metric: 2, Func: storage.StatAvg}))
	if !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("avg of categorical values: err %v, want ErrInvalidArgument", err)
	}
	// Too many buckets are refused before any work.
	many := statsQuery(metrics, storage.FeedbackStat{Metric: 0, Func: storage.StatAvg})
	many.BucketSeconds, many.End = 1, hour0.Add(24*time.Hour)
	if _, err := s.FeedbackStats(context.Background(), many); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("86400 buckets: err %v, want ErrInvalidArgument", err)
	}
}

// testFeedbackStatsFilters: feedback_type and trigger_ref (exact and
// prefix) narrow the rows; nothing matched is no bucket and no value.
func testFeedbackStatsFilters(t *testing.T, s feedbackStatsStore) {
	seedStatsFeedback(t, s)
	metrics := []storage.FeedbackMetric{{Path: []string{"output", "score"}, Type: storage.FeedbackNumeric}}
	count := storage.FeedbackStat{Metric: 0, Func: storage.StatCount}
	str := func(v string) *string { return &v }
	for _, tc := range []struct {
		name   string
		filter func(*storage.FeedbackFilter)
		rows   int64
	}{
		{"type", func(f *storage.FeedbackFilter) { f.FeedbackType = str("custom") }, 1},
		{"trigger", func(f *storage.FeedbackFilter) { f.TriggerRef = str("weave:///e/p/object/mon:v1") }, 1},
		{"trigger prefix", func(f *storage.FeedbackFilter) {
			f.TriggerRef, f.TriggerPrefix = str("weave:///e/p/object/mon"), true
		}, 2},
		{"nothing", func(f *storage.FeedbackFilter) { f.FeedbackType = str("none") }, 0},
	} {
		q := statsQuery(metrics, count)
		tc.filter(&q.FeedbackFilter)
		res, err := s.FeedbackStats(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var rows int64
		for _, b := range res.Buckets {
			rows += b.Count
		}
		if rows != tc.rows {
			t.Errorf("%s: %d rows, want %d", tc.name, rows, tc.rows)
		}
		if len(res.Window) != 1 || res.Window[0] == nil {
			t.Fatalf("%s: window %v", tc.name, floats(res.Window))
		}
		if tc.rows == 0 && (len(res.Buckets) != 0 || *res.Window[0] != 0) {
			t.Errorf("%s: buckets %+v, window count %v, want none and 0", tc.name, res.Buckets, *res.Window[0])
		}
	}
}

// scored is a monitor's feedback row with scorer output.
func scored(id, scorer, monitor, agent string, at time.Time, extra string) storage.Feedback {
	f := fb("e/p", id, "weave:///e/p/agent_turn/"+id, "wandb.runnable."+scorer, `{}`, at)
	runnable, trigger := "weave:///e/p/op/"+scorer+":d1", "weave:///e/p/object/"+monitor+":v1"
	f.RunnableRef, f.TriggerRef = &runnable, &trigger
	if agent != "" {
		extra = `{"span_agent_name":"` + agent + `"` + extra + `}`
	} else {
		extra = `{"span_trace_id":"t"` + extra + `}`
	}
	f.Extra = json.RawMessage(extra)
	return f
}

func seedScored(t *testing.T, s storage.FeedbackStore) {
	createFeedback(t, s,
		scored("s1", "safety", "mon-a", "bot", hour0.Add(time.Minute), `,"scorer_tags":["nsfw","rude"],"scorer_ratings":{"_rating_":0.25}`),
		scored("s2", "safety", "mon-a", "bot", hour0.Add(2*time.Minute), `,"scorer_tags":["nsfw"]`),
		scored("s3", "quality", "mon-b", "", hour0.Add(time.Hour+time.Minute), `,"scorer_ratings":{"_rating_":0.75,"clarity":0.5}`),
		// Scored nothing: counted, not scored.
		scored("s4", "quality", "monday", "", hour0.Add(time.Hour+2*time.Minute), ``),
		fb("e/q", "x", callRef("e/q", "c"), "wandb.runnable.safety", `{}`, hour0.Add(time.Minute)))
}

func aggregateQuery() storage.FeedbackAggregateQuery {
	return storage.FeedbackAggregateQuery{ProjectID: "e/p", After: hour0, Before: hour0.Add(2 * time.Hour)}
}

// testFeedbackAggregateGroups: rows group by hour and scorer id; tags
// count per tag, ratings per key.
func testFeedbackAggregateGroups(t *testing.T, s feedbackStatsStore) {
	seedScored(t, s)
	q := aggregateQuery()
	q.BucketSeconds, q.GroupBy = 3600, []string{"scorer_id", "span_agent_name"}
	groups, err := s.AggregateFeedback(context.Background(), q)
	if err != nil {
		t.Fatalf("AggregateFeedback: %v", err)
	}
	h1 := hour0.Add(time.Hour)
	want := []storage.FeedbackAggregateGroup{
		{BucketStart: &hour0, Group: []string{"safety", "bot"}, TotalCount: 2, ScoredCount: 2,
			TagCounts: map[string]int64{"nsfw": 2, "rude": 1}, RatingCounts: map[string]int64{"_rating_": 1},
			RatingSums: map[string]float64{"_rating_": 0.25}},
		{BucketStart: &h1, Group: []string{"quality", ""}, TotalCount: 2, ScoredCount: 1,
			TagCounts: map[string]int64{}, RatingCounts: map[string]int64{"_rating_": 1, "clarity": 1},
			RatingSums: map[string]float64{"_rating_": 0.75, "clarity": 0.5}},
	}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("groups\n got %s\nwant %s", dumpGroups(groups), dumpGroups(want))
	}
	// Without a bucket, one group per scorer over the whole range.
	q.BucketSeconds, q.GroupBy = 0, []string{"scorer_id"}
	groups, err = s.AggregateFeedback(context.Background(), q)
	if err != nil {
		t.Fatalf("AggregateFeedback: %v", err)
	}
	var ids []string
	for _, g := range groups {
		if g.BucketStart != nil {
			t.Errorf("unbucketed group has a bucket %v", g.BucketStart)
		}
		ids = append(ids, g.Group[0])
	}
	if !slices.Equal(ids, []string{"quality", "safety"}) {
		t.Errorf("scorer groups %v, want [quality safety]", ids)
	}
}

func dumpGroups(gs []storage.FeedbackAggregateGroup) string {
	b, _ := json.Marshal(gs)
	return string(b)
}

// testFeedbackAggregateFilters: each filter narrows the rows as the
// reference's do.
func testFeedbackAggregateFilters(t *testing.T, s feedbackStatsStore) {
	seedScored(t, s)
	for _, tc := range []struct {
		name  string
		set   func(q *storage.FeedbackAggregateQuery)
		total int64
	}{
		{"type prefix", func(q *storage.FeedbackAggregateQuery) { q.FeedbackTypes = []string{"wandb.runnable.saf*"} }, 2},
		{"monitor exact", func(q *storage.FeedbackAggregateQuery) { q.MonitorIDs = []string{"mon"} }, 0},
		{"monitor prefix", func(q *storage.FeedbackAggregateQuery) { q.MonitorIDs = []string{"mon*"} }, 4},
		{"monitors", func(q *storage.FeedbackAggregateQuery) { q.MonitorIDs = []string{"mon-b", "monday"} }, 2},
		{"scorer", func(q *storage.FeedbackAggregateQuery) { q.ScorerIDs = []string{"quality"} }, 2},
		{"agent", func(q *storage.FeedbackAggregateQuery) { q.SpanAgentNames = []string{"bot"} }, 2},
		{"span type", func(q *storage.FeedbackAggregateQuery) { q.SpanTypes = []string{"agent_turn"} }, 4},
		{"other span type", func(q *storage.FeedbackAggregateQuery) { q.SpanTypes = []string{"agent_conversation"} }, 0},
		{"tags", func(q *storage.FeedbackAggregateQuery) { q.Tags = []string{"rude", "none"} }, 1},
		{"rating min", func(q *storage.FeedbackAggregateQuery) { q.RatingMin = f64(0.5) }, 1},
		{"rating range", func(q *storage.FeedbackAggregateQuery) { q.RatingMin, q.RatingMax = f64(0), f64(0.5) }, 1},
		{"time", func(q *storage.FeedbackAggregateQuery) { q.Before = hour0.Add(time.Hour) }, 2},
	} {
		q := aggregateQuery()
		tc.set(&q)
		groups, err := s.AggregateFeedback(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(groups) != 1 || groups[0].TotalCount != tc.total {
			t.Errorf("%s: groups %s, want one of %d rows", tc.name, dumpGroups(groups), tc.total)
		}
	}
}

// testFeedbackAggregateEmpty: the rollup without bucket or group is one
// group even of no rows; grouped, no rows are no groups.
func testFeedbackAggregateEmpty(t *testing.T, s feedbackStatsStore) {
	q := aggregateQuery()
	groups, err := s.AggregateFeedback(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].TotalCount != 0 || groups[0].ScoredCount != 0 || len(groups[0].TagCounts) != 0 {
		t.Errorf("rollup of nothing: %s", dumpGroups(groups))
	}
	q.GroupBy = []string{"span_status_code"}
	if groups, err = s.AggregateFeedback(context.Background(), q); err != nil || len(groups) != 0 {
		t.Errorf("grouped nothing: %s, %v", dumpGroups(groups), err)
	}
	q.GroupBy = []string{"payload"}
	if _, err = s.AggregateFeedback(context.Background(), q); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("group by payload: err %v, want ErrInvalidArgument", err)
	}
}

// testFeedbackSamples: the newest payload of each trigger, newest
// trigger first, limited.
func testFeedbackSamples(t *testing.T, s feedbackStatsStore) {
	seedStatsFeedback(t, s)
	f := storage.FeedbackFilter{ProjectID: "e/p", Start: hour0, End: hour0.Add(3 * time.Hour)}
	got, err := s.SampleFeedbackPayloads(context.Background(), f, 10)
	if err != nil {
		t.Fatal(err)
	}
	var scores []any
	for _, p := range got {
		var v struct {
			Output struct{ Score any } `json:"output"`
		}
		if err := json.Unmarshal(p, &v); err != nil {
			t.Fatalf("payload %s: %v", p, err)
		}
		scores = append(scores, v.Output.Score)
	}
	// Triggers: none (row d), other (c), mon:v2 (b), mon:v1 (a).
	if want := []any{4.0, "0.7", 1.5, 0.5}; !reflect.DeepEqual(scores, want) {
		t.Errorf("sampled scores %v, want %v", scores, want)
	}
	if got, err = s.SampleFeedbackPayloads(context.Background(), f, 2); err != nil || len(got) != 2 {
		t.Errorf("limit 2: %d payloads, %v", len(got), err)
	}
	if _, err = s.SampleFeedbackPayloads(context.Background(), f, 0); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Errorf("limit 0: err %v, want ErrInvalidArgument", err)
	}
}
