package pricing

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"time"
)

// Cost is summary.weave.costs[llm_id]: the usage of one model on a call,
// the price it was charged at and the resulting totals.
type Cost struct {
	PromptTokens                      int64   `json:"prompt_tokens"`
	CompletionTokens                  int64   `json:"completion_tokens"`
	Requests                          int64   `json:"requests"`
	TotalTokens                       int64   `json:"total_tokens"`
	CacheReadInputTokens              int64   `json:"cache_read_input_tokens"`
	CacheCreationInputTokens          int64   `json:"cache_creation_input_tokens"`
	PromptTokenCost                   float64 `json:"prompt_token_cost"`
	CompletionTokenCost               float64 `json:"completion_token_cost"`
	CacheReadInputTokenCost           float64 `json:"cache_read_input_token_cost"`
	CacheCreationInputTokenCost       float64 `json:"cache_creation_input_token_cost"`
	PromptTokensTotalCost             float64 `json:"prompt_tokens_total_cost"`
	CompletionTokensTotalCost         float64 `json:"completion_tokens_total_cost"`
	CacheReadInputTokensTotalCost     float64 `json:"cache_read_input_tokens_total_cost"`
	CacheCreationInputTokensTotalCost float64 `json:"cache_creation_input_tokens_total_cost"`
	PromptTokenCostUnit               string  `json:"prompt_token_cost_unit"`
	CompletionTokenCostUnit           string  `json:"completion_token_cost_unit"`
	EffectiveDate                     string  `json:"effective_date"`
	ProviderID                        string  `json:"provider_id"`
	PricingLevel                      string  `json:"pricing_level"`
	PricingLevelID                    string  `json:"pricing_level_id"`
	CreatedBy                         string  `json:"created_by"`
	CreatedAt                         string  `json:"created_at"`
}

// usage is one model's entry of summary.usage. Clients name prompt and
// completion tokens either way; both spellings add up.
type usage struct {
	PromptTokens             number `json:"prompt_tokens"`
	InputTokens              number `json:"input_tokens"`
	CompletionTokens         number `json:"completion_tokens"`
	OutputTokens             number `json:"output_tokens"`
	Requests                 number `json:"requests"`
	TotalTokens              number `json:"total_tokens"`
	CacheReadInputTokens     number `json:"cache_read_input_tokens"`
	CacheCreationInputTokens number `json:"cache_creation_input_tokens"`
}

// Tokens is one model's entry of summary.usage with both spellings of
// prompt and completion tokens added up.
type Tokens struct {
	Requests, Prompt, Completion, Total, CacheRead, CacheCreation int64
}

// Parse reads one model's usage object; anything but an object reports
// false.
func (t *Tokens) Parse(raw json.RawMessage) bool {
	var u usage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &u) != nil {
		return false
	}
	*t = u.tokens()
	return true
}

func (u usage) tokens() Tokens {
	return Tokens{
		Requests: int64(u.Requests), Prompt: int64(u.PromptTokens + u.InputTokens),
		Completion: int64(u.CompletionTokens + u.OutputTokens), Total: int64(u.TotalTokens),
		CacheRead: int64(u.CacheReadInputTokens), CacheCreation: int64(u.CacheCreationInputTokens),
	}
}

// number reads a token count leniently: null, strings and other non-numbers
// count as 0 and fractions are truncated, as the reference's JSONExtractInt.
type number int64

func (n *number) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) == nil && !math.IsNaN(f) && math.Abs(f) < 1<<53 {
		*n = number(f)
	}
	return nil
}

// Usage returns the usage object of a call summary (summary.usage), nil
// when the summary has none.
func Usage(summary json.RawMessage) json.RawMessage {
	var s struct {
		Usage json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(summary, &s) != nil || len(s.Usage) == 0 || string(s.Usage) == "null" {
		return nil
	}
	return s.Usage
}

// LLMIDs lists the models of a summary.usage object, sorted. Anything but
// an object has none.
func LLMIDs(usageJSON json.RawMessage) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(usageJSON, &m) != nil {
		return nil
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Compute prices a call's summary.usage. For each model it takes the best
// of prices with that llm_id: in effect when the call started before not
// yet in effect, project level before default, then the latest
// effective_date. It returns the summary.weave.costs object (models
// without a price are left out), or nil when no model has a price.
func Compute(usageJSON json.RawMessage, startedAt time.Time, prices []Price) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(usageJSON, &m) != nil || len(m) == 0 {
		return nil
	}
	costs := map[string]Cost{}
	for llmID, raw := range m {
		var t Tokens
		if !t.Parse(raw) {
			continue
		}
		if p, ok := Best(llmID, startedAt, prices); ok {
			costs[llmID] = cost(t, p)
		}
	}
	if len(costs) == 0 {
		return nil
	}
	out, err := json.Marshal(costs) // map keys come out sorted
	if err != nil {
		return nil // unreachable: every value is finite
	}
	return out
}

// Best picks the price of llmID for a call started at startedAt.
func Best(llmID string, startedAt time.Time, prices []Price) (Price, bool) {
	var best Price
	found := false
	for _, p := range prices {
		if p.LLMID != llmID {
			continue
		}
		if !found || better(p, best, startedAt) {
			best, found = p, true
		}
	}
	return best, found
}

// better orders candidates as the reference's ranked_prices window does.
func better(a, b Price, startedAt time.Time) bool {
	aIn, bIn := !a.EffectiveDate.After(startedAt), !b.EffectiveDate.After(startedAt)
	if aIn != bIn {
		return aIn
	}
	if ra, rb := levelRank(a.Level), levelRank(b.Level); ra != rb {
		return ra < rb
	}
	return a.EffectiveDate.After(b.EffectiveDate)
}

func levelRank(level string) int {
	switch level {
	case LevelProject:
		return 0
	case LevelDefault:
		return 1
	}
	return 2
}

// Charges are what one model's usage costs at a price, per kind of token.
type Charges struct {
	Prompt, Completion, CacheRead, CacheCreation float64
}

// Total is the sum of the charges.
func (c Charges) Total() float64 { return c.Prompt + c.Completion + c.CacheRead + c.CacheCreation }

// Charge prices t at p. Cached input is billed at the cache rates, not the
// input rate.
func (p Price) Charge(t Tokens) Charges {
	return Charges{
		Prompt:        float64(t.Prompt-t.CacheRead-t.CacheCreation) * p.PromptTokenCost,
		Completion:    float64(t.Completion) * p.CompletionTokenCost,
		CacheRead:     float64(t.CacheRead) * p.CacheReadInputTokenCost,
		CacheCreation: float64(t.CacheCreation) * p.CacheCreationInputTokenCost,
	}
}

func cost(t Tokens, p Price) Cost {
	prompt, completion, cacheRead, cacheCreate := t.Prompt, t.Completion, t.CacheRead, t.CacheCreation
	c := p.Charge(t)
	return Cost{
		PromptTokens: prompt, CompletionTokens: completion,
		Requests: t.Requests, TotalTokens: t.Total,
		CacheReadInputTokens: cacheRead, CacheCreationInputTokens: cacheCreate,
		PromptTokenCost: p.PromptTokenCost, CompletionTokenCost: p.CompletionTokenCost,
		CacheReadInputTokenCost: p.CacheReadInputTokenCost, CacheCreationInputTokenCost: p.CacheCreationInputTokenCost,
		PromptTokensTotalCost: c.Prompt, CompletionTokensTotalCost: c.Completion,
		CacheReadInputTokensTotalCost: c.CacheRead, CacheCreationInputTokensTotalCost: c.CacheCreation,
		PromptTokenCostUnit: p.PromptTokenCostUnit, CompletionTokenCostUnit: p.CompletionTokenCostUnit,
		EffectiveDate: FormatTime(p.EffectiveDate), ProviderID: p.ProviderID,
		PricingLevel: p.Level, PricingLevelID: p.LevelID,
		CreatedBy: p.CreatedBy, CreatedAt: FormatTime(p.CreatedAt),
	}
}

// FormatTime renders t as the wire does: UTC, "Z", microseconds only when
// non-zero.
func FormatTime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}
