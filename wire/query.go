package wire

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftdev/weft/storage"
)

// SortBy is one ordering term of a query.
type SortBy struct {
	Field     string `json:"field"`
	Direction string `json:"direction"` // "asc" or "desc"
}

// UnmarshalJSON refuses a direction other than asc or desc (in any case)
// as the schema error the reference's Literal["asc", "desc"] makes it.
func (s *SortBy) UnmarshalJSON(b []byte) error {
	type plain SortBy
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	switch strings.ToLower(s.Direction) {
	case "asc", "desc":
		return nil
	}
	return &FieldError{Field: "direction", Msg: fmt.Sprintf("%q is not a direction; use \"asc\" or \"desc\"", s.Direction), Schema: SchemaLiteral}
}

// StorageSort converts sort terms to their storage form; nil stays nil
// and empty stays empty, which some queries tell apart.
func StorageSort(terms []SortBy) []storage.SortBy {
	if terms == nil {
		return nil
	}
	out := make([]storage.SortBy, len(terms))
	for i, s := range terms {
		out[i] = storage.SortBy(s)
	}
	return out
}

// CallsFilter is the structured filter of a calls query.
type CallsFilter struct {
	OpNames        []string `json:"op_names,omitempty"`
	InputRefs      []string `json:"input_refs,omitempty"`
	OutputRefs     []string `json:"output_refs,omitempty"`
	ParentIDs      []string `json:"parent_ids,omitempty"`
	TraceIDs       []string `json:"trace_ids,omitempty"`
	CallIDs        []string `json:"call_ids,omitempty"`
	ThreadIDs      []string `json:"thread_ids"` // nil = no filter; [] matches nothing
	TurnIDs        []string `json:"turn_ids"`   // nil = no filter; [] matches nothing
	TraceRootsOnly bool     `json:"trace_roots_only,omitempty"`
	WBUserIDs      []string `json:"wb_user_ids,omitempty"`
	WBRunIDs       []string `json:"wb_run_ids,omitempty"`
}

// Storage converts the filter to its storage form.
func (f CallsFilter) Storage() storage.CallsFilter { return storage.CallsFilter(f) }

// FilesStats answers /files/query_stats.
type FilesStats struct {
	TotalSizeBytes int64 `json:"total_size_bytes"`
}

// FeedbackQueryRes answers /feedback/query: one JSON object per row and
// the number of rows the query matches before limit and offset.
type FeedbackQueryRes struct {
	Result     []json.RawMessage `json:"result"`
	TotalCount int64             `json:"total_count"`
}

// CostQueryRes answers /cost/query.
type CostQueryRes struct {
	Results []json.RawMessage `json:"results"`
}
