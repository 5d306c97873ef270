package sqlgen

// FeedbackTable is feedback as /feedback/query sees it, through the
// feedback_rows view that adds the scorer and span fields with their
// defaults; the order is that of an unprojected result
// (storage.FeedbackColumns).
func FeedbackTable() Table {
	return Table{Name: "feedback_rows", Columns: []Column{
		{"id", ColString}, {"project_id", ColString}, {"weave_ref", ColString}, {"wb_user_id", ColString},
		{"creator", ColString}, {"created_at", ColTime}, {"feedback_type", ColString}, {"payload", ColJSON},
		{"annotation_ref", ColString}, {"runnable_ref", ColString}, {"call_ref", ColString},
		{"trigger_ref", ColString}, {"queue_id", ColString},
		{"scorer_tags", ColJSON}, {"scorer_tag_reasons", ColJSON}, {"scorer_tag_confidences", ColJSON},
		{"scorer_ratings", ColJSON}, {"scorer_rating_reasons", ColJSON}, {"scorer_rating_confidences", ColJSON},
		{"span_agent_name", ColString}, {"span_agent_version", ColString}, {"span_status_code", ColString},
		{"span_conversation_id", ColString}, {"span_trace_id", ColString}, {"scorer_trace_id", ColString},
	}}
}

// PricesTable is the price table as /cost/query filters and sorts it. The
// first ten columns are those an unprojected result returns
// (storage.CostColumns).
func PricesTable() Table {
	return Table{Name: "llm_token_prices", Columns: []Column{
		{"id", ColString}, {"llm_id", ColString}, {"prompt_token_cost", ColFloat}, {"completion_token_cost", ColFloat},
		{"cache_read_input_token_cost", ColFloat}, {"cache_creation_input_token_cost", ColFloat},
		{"prompt_token_cost_unit", ColString}, {"completion_token_cost_unit", ColString},
		{"effective_date", ColTime}, {"provider_id", ColString},
		{"pricing_level", ColString}, {"pricing_level_id", ColString}, {"created_by", ColString}, {"created_at", ColTime},
	}}
}
