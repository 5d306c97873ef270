package sqlgen

import (
	"fmt"
	"testing"
	"time"
)

func TestDynamicFields(t *testing.T) {
	runIDCases(t, []idCase{
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
	})
}

func TestSpecialFields(t *testing.T) {
	runIDCases(t, []idCase{
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
	})
}

func TestDatetimeAndNulls(t *testing.T) {
	unix := func(d time.Duration) string { return fmt.Sprint(at(d).Unix()) }
	runIDCases(t, []idCase{
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
	})
}

func TestFeedbackFields(t *testing.T) {
	runIDCases(t, []idCase{
		{name: "first row of a type", where: eqq("feedback.[wandb.reaction.1].payload.alias", `":thumbs_down:"`), want: []string{"c02"}},
		{name: "later rows do not match", where: eqq("feedback.[wandb.reaction.1].payload.alias", `":tada:"`), want: nil},
		{name: "any type", where: eqq("feedback.[*].payload.note", `"great"`), want: []string{"c01"}},
		{name: "inferred double cast", where: `{"$gt":[{"$getField":"feedback.[score].payload.value"},{"$literal":0.5}]}`, want: []string{"c03"}},
		{name: "other projects and object refs do not leak", where: `{"$gt":[{"$getField":"feedback.[score].payload.value"},{"$literal":0.1}]}`, want: []string{"c03", "c04"}},
		{name: "runnable_ref", where: eqq("feedback.[wandb.runnable.my_scorer].runnable_ref", `"weave:///e/p/op/my_scorer:abc"`), want: []string{"c05"}},
		{name: "whole payload", where: eqq("feedback.[wandb.note.1].payload", `"{\"note\":\"great\"}"`), want: []string{"c01"}},
		{name: "no feedback reads empty", where: eqq("feedback.[score].payload.value", `""`), want: []string{"c01", "c08", "c02", "c05"}},
		{name: "exists", where: eqq2(`{"$convert":{"input":{"$getField":"feedback.[*].payload.emoji"},"to":"exists"}}`, "true"), want: []string{"c01", "c02"}},
	})
}
