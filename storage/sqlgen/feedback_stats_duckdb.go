package sqlgen

var _ FeedbackStatsDialect = DuckDB{}

// duckJSONAt binds the JSON value at path in doc to _v for body; try()
// reads a document DuckDB cannot parse as holding nothing, as JSONValue
// does.
func duckJSONAt(doc, path, body string) string {
	return "list_transform([try(json_extract(" + doc + ", " + path + "))], lambda _v: " + body + ")[1]"
}

// JSONNumber implements FeedbackStatsDialect.
func (DuckDB) JSONNumber(doc, path string) string {
	return duckJSONAt(doc, path, "CASE WHEN json_type(_v) IN ('DOUBLE', 'BIGINT', 'UBIGINT', 'HUGEINT')"+
		" THEN TRY_CAST(_v AS DOUBLE) END")
}

// JSONBool implements FeedbackStatsDialect.
func (DuckDB) JSONBool(doc, path string) string {
	return duckJSONAt(doc, path, "CASE WHEN json_type(_v) = 'BOOLEAN'"+
		" THEN CASE WHEN CAST(_v AS VARCHAR) = 'true' THEN 1.0 ELSE 0.0 END END")
}

// JSONString implements FeedbackStatsDialect.
func (DuckDB) JSONString(doc, path string) string {
	return duckJSONAt(doc, path, "CASE WHEN json_type(_v) = 'VARCHAR' THEN json_extract_string(_v, '$') END")
}

// JSONStringList implements FeedbackStatsDialect.
func (DuckDB) JSONStringList(doc string) string {
	return "coalesce(try(from_json(" + doc + ", '[\"VARCHAR\"]')), [])"
}

// ListLength implements FeedbackStatsDialect.
func (DuckDB) ListLength(list string) string { return "len(" + list + ")" }

// Unnest implements FeedbackStatsDialect.
func (DuckDB) Unnest(list string) string { return "unnest(" + list + ")" }

// JSONEntries implements FeedbackStatsDialect with a lateral json_each.
func (DuckDB) JSONEntries(doc string) (join, key, value string) {
	return ", json_each(" + doc + ") AS _e", "_e.key", "CAST(_e.value AS VARCHAR)"
}

// RefObjectID implements FeedbackStatsDialect.
func (DuckDB) RefObjectID(ref string) string {
	return "split_part(string_split(coalesce(" + ref + ", ''), '/')[-1], ':', 1)"
}

// RefKind implements FeedbackStatsDialect.
func (DuckDB) RefKind(ref string) string {
	return "coalesce(string_split(" + ref + ", '/')[-2], '')"
}
