package sqlgen

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage/querylang"
)

// Token and cost totals of a call, summed over the models of its
// summary.usage. Both are NULL for a call without usage entries, so they
// sort last in either direction; counts that are no numbers count as 0,
// and a model without a price costs 0.

// usageKeys are the counts a usage entry is read under.
var usageKeys = []string{"requests", "prompt_tokens", "input_tokens", "completion_tokens", "output_tokens", "total_tokens",
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

// usageCounts are the counts of one usage entry that token totals and
// costs read: prompt and completion add both spellings.
type usageCounts struct{ total, prompt, completion, read, write string }

// entryCounts reads the counts of a UsageSum entry.
func (fs *fields) entryCounts(entry string) usageCounts {
	return usageCounts{
		total:      fs.usageCount(entry, "total_tokens"),
		prompt:     fs.usageCount(entry, "prompt_tokens", "input_tokens"),
		completion: fs.usageCount(entry, "completion_tokens", "output_tokens"),
		read:       fs.usageCount(entry, "cache_read_input_tokens"),
		write:      fs.usageCount(entry, "cache_creation_input_tokens"),
	}
}

// typedCounts reads the counts of a call's typed usage entry.
func (fs *fields) typedCounts() usageCounts {
	return usageCounts{total: fs.col("usage_total"), prompt: fs.col("usage_prompt"), completion: fs.col("usage_completion"),
		read: fs.col("usage_cache_read"), write: fs.col("usage_cache_create")}
}

// tokensOf is an entry's total: total_tokens when it is non-zero, else
// prompt plus completion tokens, as the UI totals a call.
func tokensOf(u usageCounts) string {
	return "(CASE WHEN " + u.total + " <> 0 THEN " + u.total + " ELSE (" + u.prompt + " + " + u.completion + ") END)"
}

// costOf is what pricing.Compute charges for an entry at price (cached
// input at the cache rates).
func costOf(u usageCounts, p SpanPrice) string {
	return "((" + u.prompt + " - " + u.read + " - " + u.write + ") * " + p.Prompt + " + " + u.completion + " * " + p.Completion +
		" + " + u.read + " * " + p.CacheRead + " + " + u.write + " * " + p.CacheCreate + ")"
}

// typedUsage renders a sum over a call's usage entries: from the typed
// columns when the dialect keeps them and the call has one model (or none:
// NULL), else parsed from the summary by parsed.
func (fs *fields) typedUsage(one func(TypedUsageDialect) string, parsed string) string {
	td, ok := fs.d.(TypedUsageDialect)
	if !ok {
		return parsed
	}
	models := fs.col("usage_models")
	return "(CASE WHEN " + models + " = 1 THEN " + one(td) + " WHEN " + models + " = 0 THEN NULL ELSE " + parsed + " END)"
}

// totalTokens is summary.weave.total_tokens, summed over the models.
func (fs *fields) totalTokens() string {
	parsed := fs.d.UsageSum(fs.col("summary"), "", nil, func(v string, _ SpanPrice) string {
		return tokensOf(fs.entryCounts(v))
	})
	return fs.typedUsage(func(TypedUsageDialect) string { return tokensOf(fs.typedCounts()) }, parsed)
}

// cost is summary.weave.cost: per model the costs pricing.Compute charges
// at the price include_costs picks for the call's start, summed.
func (fs *fields) cost() string {
	spans := fs.priceSpans()
	at := fs.d.EpochMicros(fs.col("started_at"))
	parsed := fs.d.UsageSum(fs.col("summary"), at, spans, func(v string, p SpanPrice) string {
		return costOf(fs.entryCounts(v), p)
	})
	return fs.typedUsage(func(td TypedUsageDialect) string {
		looked := td.UsageOne(fs.col("usage_model"), at, spans, func(p SpanPrice) string { return costOf(fs.typedCounts(), p) })
		return fs.costOfModels(at, looked)
	}, parsed)
}

// CostModels names the models a read's calls most likely use (a backend
// knows them from its rollups). A call of one of them is priced with its
// model's prices bound as constants, and only other calls look their
// price up in the schedule: the lookup is most of the work of pricing a
// call: the keys of a page sorted by cost over 10M calls of one model
// took 3.9 s with it and 1.0 s without (one thread, a 384 MB pool). Which models are named changes how
// fast a cost is computed, never what it is.
func CostModels(models []string) CallsOption {
	return func(p *callsPlan) { p.fs.costModels = models }
}

// costOfModels renders a typed call's cost for the models CostModels
// named, and looked, the lookup, for the others. A call without a start
// time costs 0, as the lookup finds it no span.
func (fs *fields) costOfModels(at, looked string) string {
	if len(fs.costModels) == 0 || len(fs.prices) == 0 {
		return looked
	}
	sched := fs.schedule()
	var cases []string
	for _, m := range fs.costModels {
		i := slices.IndexFunc(sched, func(s pricing.Span) bool { return s.LLMID == m })
		if i < 0 {
			continue // no price: the lookup's 0
		}
		j := lastSpan(sched, i)
		cases = append(cases, " WHEN "+fs.b.bind(m, TypeString)+" THEN "+fs.spansCost(at, sched[i:j]))
	}
	if len(cases) == 0 {
		return looked
	}
	return "(CASE " + fs.col("usage_model") + strings.Join(cases, "") + " ELSE " + looked + " END)"
}

// spansCost renders the cost of a typed call of one model whose spans
// are spans, each span's prices bound as constants.
func (fs *fields) spansCost(at string, spans []pricing.Span) string {
	cost := func(p pricing.Price) string {
		return "coalesce(" + costOf(fs.typedCounts(), SpanPrice{
			Prompt: fs.b.bind(p.PromptTokenCost, TypeFloat), Completion: fs.b.bind(p.CompletionTokenCost, TypeFloat),
			CacheRead:   fs.b.bind(p.CacheReadInputTokenCost, TypeFloat),
			CacheCreate: fs.b.bind(p.CacheCreationInputTokenCost, TypeFloat),
		}) + ", 0)"
	}
	out := "(CASE WHEN " + at + " IS NULL THEN 0"
	for _, s := range spans[:len(spans)-1] {
		out += " WHEN " + at + " < " + fs.b.bind(s.To.UnixMicro(), TypeInt) + " THEN " + cost(s.Price)
	}
	return out + " ELSE " + cost(spans[len(spans)-1].Price) + " END)"
}

// schedule lays the query's prices out once per statement.
func (fs *fields) schedule() []pricing.Span {
	if fs.sched == nil {
		fs.sched = pricing.Schedule(fs.prices)
	}
	return fs.sched
}

// priceSpans binds the schedule of the query's prices once per
// statement, as parallel arrays; nil when there are no prices.
func (fs *fields) priceSpans() *PriceSpans {
	if fs.spans != nil || len(fs.prices) == 0 {
		return fs.spans
	}
	sched := fs.schedule()
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

// TotalTokensSQL renders summary.weave.total_tokens of the calls row
// aliased alias ("" for unqualified columns), parsed from the summary as
// a dialect that keeps no column of it reads it: what a store that keeps
// one fills it with for rows written before. It binds nothing.
func TotalTokensSQL(d Dialect, alias string) string {
	b := newBuilder(d)
	sql := newFields(b, alias).totalTokens()
	if len(b.args) > 0 {
		panic("sqlgen: TotalTokensSQL bound arguments for dialect " + fmt.Sprintf("%T", d))
	}
	return sql
}

// TypedTokensSQL renders summary.weave.total_tokens of the calls row
// aliased alias ("" for unqualified columns) when its usage is typed (one
// model), NULL otherwise: the part of TotalTokensSQL without a lambda.
func TypedTokensSQL(d TypedUsageDialect, alias string) string {
	fs := newFields(newBuilder(d), alias)
	return "(CASE WHEN " + fs.col("usage_models") + " = 1 THEN " + tokensOf(fs.typedCounts()) + " END)"
}

// SummaryTokens renders the token totals of summaries as a dialect's
// parsed total_tokens reads them, one row (i, total) per summary, i its
// index from 0: a store that keeps the column computes the total of a
// summary its own reading cannot type (several models, counts that are
// no plain numbers) with the readers' own rule.
func SummaryTokens(d Dialect, summaries []string) Statement {
	b := newBuilder(d)
	list := b.bind(summaries, TypeStringList)
	fs := newFields(b, "c")
	parsed := fs.d.UsageSum(fs.col("summary"), "", nil, func(v string, _ SpanPrice) string { return tokensOf(fs.entryCounts(v)) })
	sql := "SELECT c.i, " + parsed + " FROM (SELECT unnest(range(len(" + list + "))) AS i, unnest(" + list + ") AS summary) c ORDER BY c.i"
	return Statement{SQL: sql, Args: b.args}
}
