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

// runIDCases runs cases on e, one subtest each.
func runIDCases(t *testing.T, e engine, cases []idCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := storage.CallsQuery{ProjectID: "e/p", Filter: tc.filter, SortBy: tc.sortBy}
			if tc.where != "" {
				q.Where = where(tc.where)
			}
			st, err := CallsSelect(e.d, q)
			if err != nil {
				t.Fatalf("CallsSelect: %v", err)
			}
			got, want := e.ids(t, st), tc.want
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
	runIDCases(t, duckDBFixture(t), operatorsCases())
}

// eqq2 compares an arbitrary operand with a raw JSON literal.
func eqq2(operand, lit string) string {
	return `{"$eq":[` + operand + `,{"$literal":` + lit + `}]}`
}
