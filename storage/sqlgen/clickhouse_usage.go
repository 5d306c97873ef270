package sqlgen

// EpochMicros implements Dialect.
func (ClickHouse) EpochMicros(ts string) string { return "toUnixTimestamp64Micro(" + ts + ")" }

// UsageSum implements Dialect with array functions over the raw entries
// of the usage object; an entry's span is found with arrayFirstIndex, and
// index 0 (no span) reads as a cost of 0.
func (ClickHouse) UsageSum(doc, at string, spans *PriceSpans, term func(entry string, price SpanPrice) string) string {
	entries := "JSONExtractKeysAndValuesRaw(" + doc + ", 'usage')"
	price := zeroPrice
	if spans != nil {
		idx := "arrayFirstIndex((_m, _f, _t) -> _m = _u.1 AND _f <= " + at + " AND " + at + " < _t, " +
			spans.Models + ", " + spans.From + ", " + spans.To + ")"
		cost := func(list string) string { return "if(" + idx + " = 0, 0, arrayElement(" + list + ", " + idx + "))" }
		price = SpanPrice{Prompt: cost(spans.Prompt), Completion: cost(spans.Completion),
			CacheRead: cost(spans.CacheRead), CacheCreate: cost(spans.CacheCreate)}
	}
	return "if(empty(" + entries + "), NULL, arraySum(_u -> " + term("_u.2", price) + ", " + entries + "))"
}

// UsageCount implements Dialect on the entry's raw JSON text.
func (c ClickHouse) UsageCount(entry, _ string, path func() string) string {
	return c.ParseFloat(c.JSONValue(entry, path()))
}
