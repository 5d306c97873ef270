package sqlgen

import (
	"slices"
	"testing"

	"github.com/weftdev/weft/storage"
)

type idCase struct {
	name      string
	where     string // operation JSON, "" for none
	filter    storage.CallsFilter
	sortBy    []storage.SortBy
	want      []string
	unordered bool // compare as sets
}

func runIDCases(t *testing.T, cases []idCase) {
	t.Helper()
	db := fixtureDB(t)
	d := NewDuckDB()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := storage.CallsQuery{ProjectID: "e/p", Filter: tc.filter, SortBy: tc.sortBy}
			if tc.where != "" {
				q.Where = where(tc.where)
			}
			st, err := CallsSelect(d, q)
			if err != nil {
				t.Fatalf("CallsSelect: %v", err)
			}
			got := ids(t, db, st)
			want := tc.want
			if tc.unordered {
				got, want = sorted(got), sorted(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %v; want %v\nSQL: %s", got, want, st.SQL)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestOperators(t *testing.T) {
	runIDCases(t, []idCase{
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
	})
}

// eqq2 compares an arbitrary operand with a raw JSON literal.
func eqq2(operand, lit string) string {
	return `{"$eq":[` + operand + `,{"$literal":` + lit + `}]}`
}
