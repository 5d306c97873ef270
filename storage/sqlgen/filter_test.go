package sqlgen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

func TestCallsFilter(t *testing.T) {
	runIDCases(t, duckDBFixture(t), callsFilterCases())
}

func TestFilterListLimits(t *testing.T) {
	long := make([]string, MaxFilterList+1)
	for i := range long {
		long[i] = fmt.Sprint(i)
	}
	cases := map[string]storage.CallsFilter{
		"op_names": {OpNames: long}, "input_refs": {InputRefs: long}, "output_refs": {OutputRefs: long},
		"parent_ids": {ParentIDs: long}, "trace_ids": {TraceIDs: long}, "call_ids": {CallIDs: long},
		"thread_ids": {ThreadIDs: long}, "turn_ids": {TurnIDs: long}, "wb_user_ids": {WBUserIDs: long},
		"wb_run_ids": {WBRunIDs: long},
	}
	for name, f := range cases {
		q := storage.CallsQuery{ProjectID: "e/p", Filter: f}
		for _, err := range []error{selectErr(q), countErr(q)} {
			if !errors.Is(err, storage.ErrInvalidArgument) || !strings.Contains(err.Error(), "filter."+name) {
				t.Errorf("%s: got %v; want ErrInvalidArgument naming filter.%s", name, err, name)
			}
		}
	}
	ok := storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{CallIDs: long[:MaxFilterList]}}
	if err := selectErr(ok); err != nil {
		t.Errorf("%d call ids rejected: %v", MaxFilterList, err)
	}
}

func selectErr(q storage.CallsQuery) error {
	_, err := CallsSelect(NewDuckDB(), q)
	return err
}

func countErr(q storage.CallsQuery) error {
	_, err := CallsCount(NewDuckDB(), q, 0)
	return err
}
