package sqlgen

import (
	"fmt"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// The id cases below are the tables of the tests named in each function's
// comment, which run them on DuckDB; TestClickHouseCases runs the same
// queries over the same fixtures on ClickHouse, where they must return the
// same ids.

// operatorsCases is the table of TestOperators (calls_query_test.go).
func operatorsCases() []idCase {
	return []idCase{
		{name: "eq plain column", where: eqq("op_name", `"`+opPredictV1+`"`), want: []string{"c01", "c05"}},
		{name: "eq literal first", where: `{"$eq":[{"$literal":"plain_op"},{"$getField":"op_name"}]}`, want: []string{"c08", "c04"}, unordered: true},
		{name: "gt int column", where: `{"$gt":[{"$getField":"wb_run_step"},{"$literal":2}]}`, want: []string{"c03", "c05"}},
		{name: "gte int column", where: `{"$gte":[{"$getField":"wb_run_step"},{"$literal":2}]}`, want: []string{"c02", "c03", "c05"}},
		{name: "lt int column", where: `{"$lt":[{"$getField":"wb_run_step"},{"$literal":2}]}`, want: []string{"c01"}},
		{name: "lte int column with float", where: `{"$lte":[{"$getField":"wb_run_step"},{"$literal":2.0}]}`, want: []string{"c01", "c02"}},
		{name: "lt literal on the left", where: `{"$lt":[{"$literal":4},{"$getField":"wb_run_step"}]}`, want: []string{"c05"}},
		{name: "in strings", where: `{"$in":[{"$getField":"op_name"},[{"$literal":"plain_op"},{"$literal":"` + opTrain + `"}]]}`, want: []string{"c08", "c03", "c04"}},
		{name: "in with null and wrong type elements", where: `{"$in":[{"$getField":"op_name"},[{"$literal":null},{"$literal":3},{"$literal":"plain_op"}]]}`, want: []string{"c08", "c04"}},
		{name: "in empty list", where: `{"$in":[{"$getField":"op_name"},[]]}`, want: nil},
		{name: "in ints on int column", where: `{"$in":[{"$getField":"wb_run_step"},[{"$literal":1},{"$literal":5}]]}`, want: []string{"c01", "c05"}},
		{name: "not", where: `{"$not":[` + eqq("op_name", `"plain_op"`) + `]}`, want: []string{"c01", "c02", "c03", "c05"}},
		{name: "and", where: `{"$and":[` + eqq("op_name", `"`+opPredictV1+`"`) + `,` + eqq("display_name", `"Deep call"`) + `]}`, want: []string{"c05"}},
		{name: "and of one", where: `{"$and":[` + eqq("id", `"c03"`) + `]}`, want: []string{"c03"}},
		{name: "or", where: `{"$or":[` + eqq("id", `"c03"`) + `,` + eqq("id", `"c01"`) + `]}`, want: []string{"c01", "c03"}},
		{name: "contains", where: `{"$contains":{"input":{"$getField":"display_name"},"substr":{"$literal":"Run"}}}`, want: []string{"c01"}},
		{name: "contains case sensitive misses", where: `{"$contains":{"input":{"$getField":"display_name"},"substr":{"$literal":"run"}}}`, want: nil},
		{name: "contains case insensitive", where: `{"$contains":{"input":{"$getField":"display_name"},"substr":{"$literal":"RUN"},"case_insensitive":true}}`, want: []string{"c01"}},
		{name: "contains on dynamic field", where: `{"$contains":{"input":{"$getField":"inputs.model"},"substr":{"$literal":"gpt"}}}`, want: []string{"c01", "c02"}},
		{name: "contains non-string never matches", where: `{"$contains":{"input":{"$getField":"wb_run_step"},"substr":{"$literal":"1"}}}`, want: nil},
		{name: "not contains keeps null input out", where: `{"$not":[{"$contains":{"input":{"$getField":"display_name"},"substr":{"$literal":"Run"}}}]}`, want: []string{"c08", "c02", "c03", "c04", "c05"}},
		{name: "containsToken", where: `{"$containsToken":{"input":{"$getField":"output.answer"},"substr":{"$literal":"world"},"case_insensitive":true}}`, want: []string{"c01"}},
		{name: "containsToken needs a whole token", where: `{"$containsToken":{"input":{"$getField":"output.answer"},"substr":{"$literal":"Wor"}}}`, want: nil},
		{name: "convert double", where: `{"$gt":[{"$convert":{"input":{"$getField":"inputs.n"},"to":"double"}},{"$literal":4}]}`, want: []string{"c01", "c02", "c03"}},
		{name: "convert int rejects fractions", where: `{"$eq":[{"$convert":{"input":{"$getField":"inputs.n"},"to":"int"}},{"$literal":2}]}`, want: nil},
		{name: "convert exists", where: eqq2(`{"$convert":{"input":{"$getField":"inputs.temp"},"to":"exists"}}`, "true"), want: []string{"c01", "c02"}},
		{name: "convert exists false for json null", where: `{"$and":[{"$convert":{"input":{"$getField":"output"},"to":"exists"}}]}`, want: []string{"c01", "c02", "c05"}},
		{name: "convert string of int column", where: eqq2(`{"$convert":{"input":{"$getField":"wb_run_step"},"to":"string"}}`, `"1"`), want: []string{"c01"}},
		{name: "convert bool", where: eqq2(`{"$convert":{"input":{"$getField":"inputs.flag"},"to":"bool"}}`, `0`), want: []string{"c02"}},
	}
}

// callsFilterCases is the table of TestCallsFilter (filter_test.go).
func callsFilterCases() []idCase {
	return []idCase{
		{name: "no filter shows visible calls of the project", want: []string{"c01", "c08", "c02", "c03", "c04", "c05"}},
		{name: "op_names exact", filter: storage.CallsFilter{OpNames: []string{opPredictV2, "plain_op"}}, want: []string{"c08", "c02", "c04"}},
		{name: "op_names wildcard", filter: storage.CallsFilter{OpNames: []string{"weave:///e/p/op/predict:*"}}, want: []string{"c01", "c02", "c05"}},
		{name: "op_names wildcard and exact", filter: storage.CallsFilter{OpNames: []string{"weave:///e/p/op/train:*", "plain_op"}}, want: []string{"c08", "c03", "c04"}},
		{name: "op_names wildcard needs the colon", filter: storage.CallsFilter{OpNames: []string{"weave:///e/p/op/pred:*"}}, want: nil},
		{name: "input_refs exact", filter: storage.CallsFilter{InputRefs: []string{dsRef}}, want: []string{"c01"}},
		{name: "input_refs wildcard", filter: storage.CallsFilter{InputRefs: []string{"weave:///e/p/object/ds:*"}}, want: []string{"c01", "c03"}},
		{name: "output_refs", filter: storage.CallsFilter{OutputRefs: []string{modelRef, "weave:///e/p/object/none:x"}}, want: []string{"c02"}},
		{name: "parent_ids", filter: storage.CallsFilter{ParentIDs: []string{"c01", "c02"}}, want: []string{"c02", "c05"}},
		{name: "trace_ids", filter: storage.CallsFilter{TraceIDs: []string{"t1"}}, want: []string{"c01", "c02", "c05"}},
		{name: "call_ids", filter: storage.CallsFilter{CallIDs: []string{"c05", "c03", "c06", "c07", "x01"}}, want: []string{"c03", "c05"}},
		{name: "thread_ids", filter: storage.CallsFilter{ThreadIDs: []string{"th1"}}, want: []string{"c01", "c02", "c05"}},
		{name: "thread_ids empty matches nothing", filter: storage.CallsFilter{ThreadIDs: []string{}}, want: nil},
		{name: "turn_ids", filter: storage.CallsFilter{TurnIDs: []string{"c01"}}, want: []string{"c01", "c02"}},
		{name: "turn_ids empty matches nothing", filter: storage.CallsFilter{TurnIDs: []string{}}, want: nil},
		{name: "trace_roots_only", filter: storage.CallsFilter{TraceRootsOnly: true}, want: []string{"c01", "c08", "c03", "c04"}},
		{name: "wb_user_ids", filter: storage.CallsFilter{WBUserIDs: []string{"u1"}}, want: []string{"c01", "c03"}},
		{name: "wb_run_ids qualified", filter: storage.CallsFilter{WBRunIDs: []string{"e/p/run1"}}, want: []string{"c01"}},
		{name: "wb_run_ids bare", filter: storage.CallsFilter{WBRunIDs: []string{"run2"}}, want: []string{"c04"}},
		{name: "filter and query combine", filter: storage.CallsFilter{TraceIDs: []string{"t1"}}, where: eqq("op_name", `"`+opPredictV1+`"`), want: []string{"c01", "c05"}},
	}
}

// sortCases is the table of TestSort (sort_test.go).
func sortCases() []idCase {
	all := []string{"c01", "c02", "c03", "c04", "c05", "c08"}
	return []idCase{
		{name: "default started_at then id", want: []string{"c01", "c08", "c02", "c03", "c04", "c05"}},
		{name: "empty list means no order", sortBy: []storage.SortBy{}, want: all, unordered: true},
		{name: "started_at desc ties by id desc", sortBy: sortBy("started_at", "desc"), want: []string{"c05", "c04", "c03", "c02", "c08", "c01"}},
		{name: "direction is case insensitive", sortBy: sortBy("started_at", "DESC"), want: []string{"c05", "c04", "c03", "c02", "c08", "c01"}},
		{name: "started_at asc ties by id asc", sortBy: sortBy("started_at", "Asc"), want: []string{"c01", "c08", "c02", "c03", "c04", "c05"}},
		{name: "other field ties by id desc", sortBy: sortBy("op_name", "asc"), want: []string{"c08", "c04", "c05", "c01", "c02", "c03"}},
		{name: "explicit id is the only tiebreaker", sortBy: sortBy("op_name", "asc", "id", "asc"), want: []string{"c04", "c08", "c01", "c05", "c02", "c03"}},
		{name: "nulls last ascending", sortBy: sortBy("wb_run_step", "asc"), want: []string{"c01", "c02", "c03", "c05", "c08", "c04"}},
		{name: "nulls last descending", sortBy: sortBy("wb_run_step", "desc"), want: []string{"c05", "c03", "c02", "c01", "c08", "c04"}},
		{name: "dynamic numeric asc, missing last", sortBy: sortBy("inputs.n", "asc"), want: []string{"c04", "c01", "c03", "c02", "c08", "c05"}},
		{name: "dynamic numeric desc, missing last", sortBy: sortBy("inputs.n", "desc"), want: []string{"c02", "c03", "c01", "c04", "c08", "c05"}},
		{name: "dynamic strings", sortBy: sortBy("inputs.model", "asc"), want: []string{"c03", "c02", "c01", "c08", "c05", "c04"}},
		{name: "latency desc, running last", sortBy: sortBy("summary.weave.latency_ms", "desc"), want: []string{"c04", "c01", "c05", "c02", "c08", "c03"}},
		{name: "status", sortBy: sortBy("summary.weave.status", "asc", "id", "asc"), want: []string{"c02", "c04", "c03", "c01", "c05", "c08"}},
		{name: "trace_name", sortBy: sortBy("summary.weave.trace_name", "asc"), want: []string{"c05", "c01", "c08", "c04", "c02", "c03"}},
		{name: "feedback value, missing last", sortBy: sortBy("feedback.[score].payload.value", "desc"), want: []string{"c03", "c04", "c08", "c05", "c02", "c01"}},
		{name: "sort with filter and limitless", filter: storage.CallsFilter{TraceIDs: []string{"t1"}}, sortBy: sortBy("started_at", "desc"), want: []string{"c05", "c02", "c01"}},
	}
}

// dynamicFieldsCases is the table of TestDynamicFields (fields_test.go).
func dynamicFieldsCases() []idCase {
	return []idCase{
		{name: "string value", where: eqq("inputs.model", `"gpt-4"`), want: []string{"c01"}},
		{name: "string that looks numeric stays as written", where: eqq("inputs.s", `"5.0"`), want: []string{"c01"}},
		{name: "integral float reads without fraction", where: eqq("inputs.f", `"5"`), want: []string{"c05"}},
		{name: "int reads as text", where: eqq("inputs.temp", `"1"`), want: []string{"c02"}},
		{name: "bool reads as true", where: eqq("inputs.flag", `"true"`), want: []string{"c01"}},
		{name: "array reads as minified json", where: eqq("inputs.tags", `"[\"a\",\"b\"]"`), want: []string{"c01"}},
		{name: "object reads as minified json", where: eqq("inputs.nested", `"{\"k\":\"v\"}"`), want: []string{"c01"}},
		{name: "whole scalar output", where: eqq("output", `"plain string"`), want: []string{"c02"}},
		{name: "missing and null read as empty", where: eqq("output.answer", `""`), want: []string{"c08", "c02", "c03", "c04"}},
		{name: "eq null never matches a dynamic field", where: eqq("output.answer", `null`), want: nil},
		{name: "escaped dot in key", where: eqq(`inputs.a\.b`, `"dotted"`), want: []string{"c01"}},
		{name: "integer segment indexes arrays", where: eqq("inputs.tags.1", `"b"`), want: []string{"c01"}},
		{name: "attributes", where: eqq("attributes.env", `"prod"`), want: []string{"c01"}},
		{name: "summary path", where: eqq("summary.usage.gpt-4.prompt_tokens", `10`), want: []string{"c01"}},
		{name: "inferred int cast", where: eqq("inputs.n", `5`), want: []string{"c01"}},
		{name: "inferred int cast parses strings", where: `{"$gt":[{"$getField":"inputs.n"},{"$literal":4}]}`, want: []string{"c01", "c02", "c03"}},
		{name: "inferred int cast skips fractions", where: `{"$lt":[{"$getField":"inputs.n"},{"$literal":4}]}`, want: nil},
		{name: "inferred double cast", where: eqq("inputs.n", `2.5`), want: []string{"c04"}},
		{name: "inferred double cast from int text", where: eqq("inputs.temp", `1.0`), want: []string{"c02"}},
		{name: "inferred bool cast", where: eqq("inputs.flag", `true`), want: []string{"c01"}},
		{name: "inferred cast with field on the right", where: `{"$gt":[{"$literal":6},{"$getField":"inputs.n"}]}`, want: []string{"c01"}},
		{name: "in infers a shared cast", where: `{"$in":[{"$getField":"inputs.n"},[{"$literal":5},{"$literal":10}]]}`, want: []string{"c01", "c02"}},
		{name: "in int and double infer double", where: `{"$in":[{"$getField":"inputs.n"},[{"$literal":7},{"$literal":2.5}]]}`, want: []string{"c03", "c04"}},
		{name: "in strings keep text", where: `{"$in":[{"$getField":"inputs.model"},[{"$literal":"claude"},{"$literal":"gpt-4"}]]}`, want: []string{"c01", "c03"}},
		{name: "string literal against number field text", where: eqq("inputs.n", `"7"`), want: []string{"c03"}},
		{name: "not of a prefiltered eq", where: `{"$not":[` + eqq("inputs.model", `"gpt-4"`) + `]}`, want: []string{"c08", "c02", "c03", "c04", "c05"}},
		{name: "exponent number reads normalised", where: eqq("inputs.big", `"1000"`), want: []string{"c08"}},
		{name: "contains in normalised number", where: `{"$contains":{"input":{"$getField":"inputs.big"},"substr":{"$literal":"000"}}}`, want: []string{"c08"}},
		{name: "contains in number", where: `{"$contains":{"input":{"$getField":"inputs.n"},"substr":{"$literal":"2.5"}}}`, want: []string{"c04"}},
		{name: "escaped letters read unescaped", where: eqq("inputs.word", `"xAy"`), want: []string{"c08"}},
		{name: "escaped letters contain", where: `{"$contains":{"input":{"$getField":"inputs.word"},"substr":{"$literal":"XA"},"case_insensitive":true}}`, want: []string{"c08"}},
		{name: "in with prefilter", where: `{"$in":[{"$getField":"inputs.model"},[{"$literal":"claude"},{"$literal":"gpt-3.5"}]]}`, want: []string{"c02", "c03"}},
		{name: "not in with prefilter", where: `{"$not":[{"$in":[{"$getField":"inputs.model"},[{"$literal":"claude"},{"$literal":"gpt-3.5"}]]}]}`, want: []string{"c01", "c08", "c04", "c05"}},
		{name: "mixed string and number never match", where: eqq("op_name", `5`), want: nil},
		{name: "not of a mismatch stays false", where: `{"$not":[` + eqq("op_name", `5`) + `]}`, want: nil},
	}
}

// specialFieldsCases is the table of TestSpecialFields (fields_test.go).
func specialFieldsCases() []idCase {
	return []idCase{
		{name: "status error", where: eqq("summary.weave.status", `"error"`), want: []string{"c04"}},
		{name: "status descendant_error", where: eqq("summary.weave.status", `"descendant_error"`), want: []string{"c02"}},
		{name: "status running", where: eqq("summary.weave.status", `"running"`), want: []string{"c03"}},
		{name: "status success", where: eqq("summary.weave.status", `"success"`), want: []string{"c01", "c08", "c05"}},
		{name: "latency_ms", where: `{"$gt":[{"$getField":"summary.weave.latency_ms"},{"$literal":1000}]}`, want: []string{"c01", "c04"}},
		{name: "latency_ms exact", where: eqq("summary.weave.latency_ms", `250`), want: []string{"c02"}},
		{name: "latency_ms null while running", where: eqq("summary.weave.latency_ms", `null`), want: []string{"c03"}},
		{name: "trace_name from display name", where: eqq("summary.weave.trace_name", `"First Run"`), want: []string{"c01"}},
		{name: "trace_name from op ref", where: eqq("summary.weave.trace_name", `"predict"`), want: []string{"c02"}},
		{name: "trace_name from plain op and empty display", where: eqq("summary.weave.trace_name", `"plain_op"`), want: []string{"c08", "c04"}},
	}
}

// datetimeAndNullsCases is the table of TestDatetimeAndNulls (fields_test.go).
func datetimeAndNullsCases() []idCase {
	unix := func(d time.Duration) string { return fmt.Sprint(at(d).Unix()) }
	return []idCase{
		{name: "unix seconds", where: `{"$gt":[{"$getField":"started_at"},{"$literal":` + unix(150*time.Second) + `}]}`, want: []string{"c03", "c04", "c05"}},
		{name: "fractional unix seconds", where: `{"$lt":[{"$getField":"started_at"},{"$literal":` + unix(2*time.Minute) + `.5}]}`, want: []string{"c01", "c08", "c02"}},
		{name: "iso with Z", where: `{"$gte":[{"$getField":"started_at"},{"$literal":"2024-01-01T00:04:00Z"}]}`, want: []string{"c04", "c05"}},
		{name: "iso with offset", where: `{"$lt":[{"$getField":"started_at"},{"$literal":"2024-01-01T01:01:30+01:00"}]}`, want: []string{"c01", "c08"}},
		{name: "naive iso is utc", where: eqq("started_at", `"2024-01-01T00:03:00"`), want: []string{"c03"}},
		{name: "literal on the left", where: `{"$gt":[{"$literal":"2024-01-01 00:01:30"},{"$getField":"started_at"}]}`, want: []string{"c01", "c08"}},
		{name: "ended_at in list", where: `{"$in":[{"$getField":"ended_at"},[{"$literal":"2024-01-01T00:01:00Z"},{"$literal":"nope"}]]}`, want: []string{"c08"}},
		{name: "unparseable datetime never matches", where: eqq("started_at", `"yesterday"`), want: nil},
		{name: "bool datetime never matches", where: eqq("started_at", `true`), want: nil},
		{name: "eq null is IS NULL", where: eqq("ended_at", `null`), want: []string{"c03"}},
		{name: "not eq null", where: `{"$not":[` + eqq("ended_at", `null`) + `]}`, want: []string{"c01", "c08", "c02", "c04", "c05"}},
		{name: "empty optional string is null", where: eqq("display_name", `null`), want: []string{"c08", "c02", "c03", "c04"}},
		{name: "parent_id null means root", where: eqq("parent_id", `null`), want: []string{"c01", "c08", "c03", "c04"}},
		{name: "comparison with null column is null", where: `{"$gt":[{"$getField":"wb_run_step"},{"$literal":0}]}`, want: []string{"c01", "c02", "c03", "c05"}},
		{name: "not keeps null out", where: `{"$not":[{"$gt":[{"$getField":"wb_run_step"},{"$literal":2}]}]}`, want: []string{"c01", "c02"}},
		{name: "gt null literal is null", where: `{"$or":[{"$gt":[{"$getField":"wb_run_step"},{"$literal":null}]},` + eqq("id", `"c01"`) + `]}`, want: []string{"c01"}},
		{name: "in with null operand", where: `{"$not":[{"$in":[{"$getField":"wb_run_step"},[{"$literal":"x"}]]}]}`, want: []string{"c01", "c02", "c03", "c05"}},
	}
}

// feedbackFieldsCases is the table of TestFeedbackFields (fields_test.go).
func feedbackFieldsCases() []idCase {
	return []idCase{
		{name: "first row of a type", where: eqq("feedback.[wandb.reaction.1].payload.alias", `":thumbs_down:"`), want: []string{"c02"}},
		{name: "later rows do not match", where: eqq("feedback.[wandb.reaction.1].payload.alias", `":tada:"`), want: nil},
		{name: "any type", where: eqq("feedback.[*].payload.note", `"great"`), want: []string{"c01"}},
		{name: "inferred double cast", where: `{"$gt":[{"$getField":"feedback.[score].payload.value"},{"$literal":0.5}]}`, want: []string{"c03"}},
		{name: "other projects and object refs do not leak", where: `{"$gt":[{"$getField":"feedback.[score].payload.value"},{"$literal":0.1}]}`, want: []string{"c03", "c04"}},
		{name: "runnable_ref", where: eqq("feedback.[wandb.runnable.my_scorer].runnable_ref", `"weave:///e/p/op/my_scorer:abc"`), want: []string{"c05"}},
		{name: "whole payload", where: eqq("feedback.[wandb.note.1].payload", `"{\"note\":\"great\"}"`), want: []string{"c01"}},
		{name: "no feedback reads empty", where: eqq("feedback.[score].payload.value", `""`), want: []string{"c01", "c08", "c02", "c05"}},
		{name: "exists", where: eqq2(`{"$convert":{"input":{"$getField":"feedback.[*].payload.emoji"},"to":"exists"}}`, "true"), want: []string{"c01", "c02"}},
	}
}

// chCaseGroups lists every copied table by the DuckDB test it mirrors.
func chCaseGroups() map[string][]idCase {
	return map[string][]idCase{
		"Operators":        operatorsCases(),
		"CallsFilter":      callsFilterCases(),
		"Sort":             sortCases(),
		"DynamicFields":    dynamicFieldsCases(),
		"SpecialFields":    specialFieldsCases(),
		"DatetimeAndNulls": datetimeAndNullsCases(),
		"FeedbackFields":   feedbackFieldsCases(),
	}
}

// TestClickHouseCases runs every copied table on ClickHouse, and on
// DuckDB as a check that the copies still say what the originals say.
func TestClickHouseCases(t *testing.T) {
	engines := []engine{clickHouseFixture(t), duckDBFixture(t)}
	for name, cases := range chCaseGroups() {
		t.Run(name, func(t *testing.T) {
			for _, e := range engines {
				t.Run(e.name, func(t *testing.T) { runIDCases(t, e, cases) })
			}
		})
	}
}
