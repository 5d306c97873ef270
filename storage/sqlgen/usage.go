package sqlgen

import (
	"math"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage/querylang"
)

// Token and cost totals of a call, summed over the models of its
// summary.usage. Both are NULL for a call without usage entries, so they
// sort last in either direction; counts that are no numbers count as 0,
// and a model without a price costs 0.

// usageKeys are the counts a usage entry is read under.
var usageKeys = []string{"prompt_tokens", "input_tokens", "completion_tokens", "output_tokens", "total_tokens",
	"cache_read_input_tokens", "cache_creation_input_tokens"}

// usageCount renders an entry's count under the first key that holds a
// number, else 0; several names add up (prompt_tokens + input_tokens).
func (fs *fields) usageCount(entry string, names ...string) string {
	terms := make([]string, len(names))
	for i, n := range names {
		path := func() string { return fs.jsonPath([]querylang.Segment{{Key: n}}) }
		terms[i] = "coalesce(" + fs.d.UsageCount(entry, n, path) + ", 0)"
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return "(" + joinPlus(terms) + ")"
}

func joinPlus(terms []string) string {
	s := terms[0]
	for _, t := range terms[1:] {
		s += " + " + t
	}
	return s
}

// totalTokens is summary.weave.total_tokens: per model total_tokens when
// it is a non-zero number, else prompt plus completion tokens (both
// spellings), as the UI totals a call.
func (fs *fields) totalTokens() string {
	return fs.d.UsageSum(fs.col("summary"), "", nil, func(v string, _ SpanPrice) string {
		total := fs.usageCount(v, "total_tokens")
		parts := fs.usageCount(v, "prompt_tokens", "input_tokens", "completion_tokens", "output_tokens")
		return "(CASE WHEN " + total + " <> 0 THEN " + total + " ELSE " + parts + " END)"
	})
}

// cost is summary.weave.cost: per model the costs pricing.Compute charges
// (cached input at the cache rates), at the price include_costs picks for
// the call's start, summed.
func (fs *fields) cost() string {
	spans := fs.priceSpans()
	at := fs.d.EpochMicros(fs.col("started_at"))
	return fs.d.UsageSum(fs.col("summary"), at, spans, func(v string, p SpanPrice) string {
		prompt := fs.usageCount(v, "prompt_tokens", "input_tokens")
		completion := fs.usageCount(v, "completion_tokens", "output_tokens")
		read, write := fs.usageCount(v, "cache_read_input_tokens"), fs.usageCount(v, "cache_creation_input_tokens")
		return "((" + prompt + " - " + read + " - " + write + ") * " + p.Prompt + " + " + completion + " * " + p.Completion +
			" + " + read + " * " + p.CacheRead + " + " + write + " * " + p.CacheCreate + ")"
	})
}

// priceSpans binds the schedule of the query's prices once per
// statement, as parallel arrays; nil when there are no prices.
func (fs *fields) priceSpans() *PriceSpans {
	if fs.spans != nil || len(fs.prices) == 0 {
		return fs.spans
	}
	sched := pricing.Schedule(fs.prices)
	n := len(sched)
	models, from, to, last := make([]string, n), make([]int64, n), make([]int64, n), make([]int64, n)
	costs := [4][]float64{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	for i, s := range sched {
		models[i], from[i], to[i], last[i] = s.LLMID, int64(math.MinInt64), int64(math.MaxInt64), lastSpan(sched, i)
		if !s.From.IsZero() {
			from[i] = s.From.UnixMicro()
		}
		if !s.To.IsZero() {
			to[i] = s.To.UnixMicro()
		}
		p := s.Price
		costs[0][i], costs[1][i] = p.PromptTokenCost, p.CompletionTokenCost
		costs[2][i], costs[3][i] = p.CacheReadInputTokenCost, p.CacheCreationInputTokenCost
	}
	b := fs.b
	fs.spans = &PriceSpans{Models: b.bind(models, TypeStringList), From: b.bind(from, TypeIntList), To: b.bind(to, TypeIntList),
		Last:   b.bind(last, TypeIntList),
		Prompt: b.bind(costs[0], TypeFloatList), Completion: b.bind(costs[1], TypeFloatList),
		CacheRead: b.bind(costs[2], TypeFloatList), CacheCreate: b.bind(costs[3], TypeFloatList)}
	return fs.spans
}

// lastSpan is the 1-based index of the last span of the model of
// sched[i]; Schedule keeps a model's spans together.
func lastSpan(sched []pricing.Span, i int) int64 {
	j := i
	for j+1 < len(sched) && sched[j+1].LLMID == sched[i].LLMID {
		j++
	}
	return int64(j + 1)
}
