package sqlgen

// EpochMicros implements Dialect.
func (DuckDB) EpochMicros(ts string) string { return "epoch_us(" + ts + ")" }

// UsageSum implements Dialect with a correlated subquery over json_each
// of the usage object, joined with the unnested price spans. DuckDB only
// decorrelates inner joins there, so entries without a span drop out of
// the join (they cost 0) and the guard keeps a usage object with entries
// at 0 rather than NULL.
func (DuckDB) UsageSum(doc, at string, spans *PriceSpans, term func(value string, price SpanPrice) string) string {
	from := "json_each(" + doc + ", '$.usage') AS _u"
	price := zeroPrice
	if spans != nil {
		from += " JOIN (SELECT unnest(" + spans.Models + ") AS m, unnest(" + spans.From + ") AS f, unnest(" +
			spans.To + ") AS t, unnest(" + spans.Prompt + ") AS pp, unnest(" + spans.Completion + ") AS cp, unnest(" +
			spans.CacheRead + ") AS rp, unnest(" + spans.CacheCreate + ") AS wp) AS _p ON _p.m = _u.key AND _p.f <= " +
			at + " AND " + at + " < _p.t"
		price = SpanPrice{Prompt: "_p.pp", Completion: "_p.cp", CacheRead: "_p.rp", CacheCreate: "_p.wp"}
	}
	return "(CASE WHEN json_type(" + doc + ", '$.usage') = 'OBJECT' AND len(json_keys(" + doc + ", '$.usage')) > 0" +
		" THEN coalesce((SELECT sum(" + term("CAST(_u.value AS VARCHAR)", price) + ") FROM " + from + "), 0) END)"
}
