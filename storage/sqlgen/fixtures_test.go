package sqlgen

import (
	"database/sql"
	"testing"
	"time"
)

func i64(v int64) *int64 { return &v }

const (
	opPredictV1 = "weave:///e/p/op/predict:v1"
	opPredictV2 = "weave:///e/p/op/predict:v2"
	opTrain     = "weave:///e/p/op/train:v1"
	dsRef       = "weave:///e/p/object/ds:abc"
	modelRef    = "weave:///e/p/object/model:def"
)

// callFixtures is the data set of the calls tests. Visible calls of e/p in
// the default order: c01, c08, c02, c03, c04, c05.
func callFixtures() []call {
	return []call{
		{id: "c01", trace: "t1", thread: "th1", turn: "c01", op: opPredictV1, display: "First Run",
			started: at(time.Minute), ended: ptrTime(at(time.Minute + 1500*time.Millisecond)),
			attributes: `{"env": "prod"}`,
			inputs:     `{"model": "gpt-4", "n": 5, "temp": 0.5, "flag": true, "tags": ["a", "b"], "nested": {"k": "v"}, "a.b": "dotted", "s": "5.0"}`,
			output:     `{"answer": "Hello World"}`,
			summary:    `{"usage": {"gpt-4": {"prompt_tokens": 10}}, "status_counts": {"success": 1, "error": 0}}`,
			wbUser:     "u1", wbRun: "e/p/run1", step: i64(1), inputRefs: []string{dsRef}},
		{id: "c02", trace: "t1", parent: "c01", thread: "th1", turn: "c01", op: opPredictV2,
			started: at(2 * time.Minute), ended: ptrTime(at(2*time.Minute + 250*time.Millisecond)),
			inputs: `{"model": "gpt-3.5", "n": 10, "temp": 1, "flag": false}`, output: `"plain string"`,
			summary: `{"status_counts": {"error": 2}}`, wbUser: "u2", step: i64(2), outputRefs: []string{modelRef}},
		{id: "c03", trace: "t2", thread: "th2", turn: "c03", op: opTrain,
			started: at(3 * time.Minute), inputs: `{"model": "claude", "n": "7"}`, summary: `{}`,
			wbUser: "u1", step: i64(3), inputRefs: []string{"weave:///e/p/object/ds:xyz"}},
		{id: "c04", trace: "t3", thread: "''", turn: "c04", op: "plain_op", display: "''",
			started: at(4 * time.Minute), ended: ptrTime(at(4*time.Minute + 10*time.Second)),
			inputs: `{"n": 2.5}`, output: `null`, summary: `{}`, exception: "boom", wbRun: "e/p/run2"},
		{id: "c05", trace: "t1", parent: "c02", thread: "th1", turn: "c05", op: opPredictV1, display: "Deep call",
			started: at(5 * time.Minute), ended: ptrTime(at(5*time.Minute + time.Second)),
			inputs: `{"f": 5.0}`, output: `{"answer": "bye"}`, summary: `{}`, step: i64(5)},
		{id: "c06", trace: "t1", op: opPredictV1, started: at(6 * time.Minute), deleted: ptrTime(at(time.Hour)),
			inputs: `{}`},
		{id: "c07", trace: "t1", endOnly: true, output: `{"answer": "orphan"}`},
		{id: "c08", trace: "t4", op: "plain_op", started: at(time.Minute), ended: ptrTime(at(time.Minute)),
			inputs: `{"big": 1e3, "word": "x\u0041y"}`, summary: `{}`},
		{project: "e/other", id: "x01", trace: "t1", op: opPredictV1, started: at(time.Minute), inputs: `{"n": 5}`},
	}
}

func feedbackFixtures() []feedbackRow {
	ref := func(id string) string { return "weave:///e/p/call/" + id }
	return []feedbackRow{
		{project: "e/p", id: "f1", ref: ref("c01"), typ: "wandb.reaction.1", payload: `{"emoji": "👍", "alias": ":thumbs_up:"}`, created: at(10 * time.Minute)},
		{project: "e/p", id: "f2", ref: ref("c01"), typ: "wandb.note.1", payload: `{"note": "great"}`, created: at(11 * time.Minute)},
		{project: "e/p", id: "f3", ref: ref("c02"), typ: "wandb.reaction.1", payload: `{"emoji": "👎", "alias": ":thumbs_down:"}`, created: at(12 * time.Minute)},
		{project: "e/p", id: "f4", ref: ref("c02"), typ: "wandb.reaction.1", payload: `{"emoji": "🎉", "alias": ":tada:"}`, created: at(13 * time.Minute)},
		{project: "e/p", id: "f5", ref: ref("c03"), typ: "score", payload: `{"value": 0.9}`, created: at(14 * time.Minute)},
		{project: "e/p", id: "f6", ref: ref("c04"), typ: "score", payload: `{"value": 0.2}`, created: at(15 * time.Minute)},
		{project: "e/other", id: "f7", ref: "weave:///e/other/call/c01", typ: "score", payload: `{"value": 100}`, created: at(16 * time.Minute)},
		{project: "e/p", id: "f8", ref: ref("c05"), typ: "wandb.runnable.my_scorer", payload: `{"output": 3}`,
			runnable: "weave:///e/p/op/my_scorer:abc", created: at(17 * time.Minute)},
		{project: "e/p", id: "f9", ref: "weave:///e/p/object/ds:abc", typ: "score", payload: `{"value": 0.95}`, created: at(18 * time.Minute)},
	}
}

// fixtureDB returns a database holding callFixtures and feedbackFixtures.
func fixtureDB(t testing.TB) *sql.DB {
	t.Helper()
	db := openDB(t)
	insertCalls(t, db, callFixtures())
	insertFeedback(t, db, feedbackFixtures())
	return db
}
