package sqlgen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weftdev/weft/storage"
)

func TestCallsFilter(t *testing.T) {
	runIDCases(t, []idCase{
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
	})
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
