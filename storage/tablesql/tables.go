package tablesql

// FeedbackTable is the feedback table as /feedback/query sees it; the
// order is that of an unprojected result (storage.FeedbackColumns).
func FeedbackTable() Table {
	return Table{Name: "feedback", Columns: []Column{
		{"id", String}, {"project_id", String}, {"weave_ref", String}, {"wb_user_id", String},
		{"creator", String}, {"created_at", Time}, {"feedback_type", String}, {"payload", JSON},
		{"annotation_ref", String}, {"runnable_ref", String}, {"call_ref", String},
		{"trigger_ref", String}, {"queue_id", String},
	}}
}

// PricesTable is the price table as /cost/query filters and sorts it. The
// first ten columns are those an unprojected result returns
// (storage.CostColumns).
func PricesTable() Table {
	return Table{Name: "llm_token_prices", Columns: []Column{
		{"id", String}, {"llm_id", String}, {"prompt_token_cost", Float}, {"completion_token_cost", Float},
		{"cache_read_input_token_cost", Float}, {"cache_creation_input_token_cost", Float},
		{"prompt_token_cost_unit", String}, {"completion_token_cost_unit", String},
		{"effective_date", Time}, {"provider_id", String},
		{"pricing_level", String}, {"pricing_level_id", String}, {"created_by", String}, {"created_at", Time},
	}}
}
