package pricing

// With returns a table holding t's rows and extra, where extra's rows
// replace every row of t for the same model: a price configured for a
// model wins over the shipped ones whatever their dates. t is unchanged.
func (t *Table) With(extra []Price) *Table {
	out := &Table{byLLM: make(map[string][]Price, len(t.byLLM)+len(extra))}
	for id, rows := range t.byLLM {
		out.byLLM[id] = rows
	}
	replaced := map[string]bool{}
	for _, p := range extra {
		if !replaced[p.LLMID] {
			out.byLLM[p.LLMID] = nil
			replaced[p.LLMID] = true
		}
		out.byLLM[p.LLMID] = append(out.byLLM[p.LLMID], p)
	}
	for _, rows := range out.byLLM {
		out.n += len(rows)
	}
	return out
}
