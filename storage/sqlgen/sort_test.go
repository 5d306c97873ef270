package sqlgen

import (
	"testing"

	"github.com/weftdev/weft/storage"
)

func sortBy(pairs ...string) []storage.SortBy {
	var out []storage.SortBy
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, storage.SortBy{Field: pairs[i], Direction: pairs[i+1]})
	}
	return out
}

func TestSort(t *testing.T) {
	all := []string{"c01", "c02", "c03", "c04", "c05", "c08"}
	runIDCases(t, []idCase{
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
	})
}
