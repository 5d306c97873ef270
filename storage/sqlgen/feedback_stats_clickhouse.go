package sqlgen

var _ FeedbackStatsDialect = ClickHouse{}

// JSONNumber implements FeedbackStatsDialect.
func (ClickHouse) JSONNumber(doc, path string) string {
	return chOnce("_v", chRawAt(doc, path),
		"if(JSONType(_v) IN ('Int64', 'UInt64', 'Double'), toFloat64OrNull(_v), NULL)")
}

// JSONBool implements FeedbackStatsDialect.
func (ClickHouse) JSONBool(doc, path string) string {
	return chOnce("_v", chRawAt(doc, path), "multiIf(_v = 'true', toFloat64(1), _v = 'false', toFloat64(0), NULL)")
}

// JSONString implements FeedbackStatsDialect.
func (ClickHouse) JSONString(doc, path string) string {
	return chOnce("_v", chRawAt(doc, path), "if(JSONType(_v) = 'String', JSONExtractString(_v), NULL)")
}

// JSONStringList implements FeedbackStatsDialect.
func (ClickHouse) JSONStringList(doc string) string {
	return "JSONExtract(ifNull(" + doc + ", ''), 'Array(String)')"
}

// ListLength implements FeedbackStatsDialect.
func (ClickHouse) ListLength(list string) string { return "length(" + list + ")" }

// Unnest implements FeedbackStatsDialect.
func (ClickHouse) Unnest(list string) string { return "arrayJoin(" + list + ")" }

// JSONEntries implements FeedbackStatsDialect with an ARRAY JOIN of the
// raw entries.
func (ClickHouse) JSONEntries(doc string) (join, key, value string) {
	return " ARRAY JOIN JSONExtractKeysAndValuesRaw(ifNull(" + doc + ", '')) AS _e", "_e.1", "_e.2"
}

// RefObjectID implements FeedbackStatsDialect.
func (ClickHouse) RefObjectID(ref string) string {
	return "splitByChar(':', splitByChar('/', ifNull(" + ref + ", ''))[-1])[1]"
}

// RefKind implements FeedbackStatsDialect.
func (ClickHouse) RefKind(ref string) string { return "splitByChar('/', " + ref + ")[-2]" }
