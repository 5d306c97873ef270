package storage

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// SummaryUsage is a call's summary.usage in the typed form a store keeps
// beside the summary, so that token sorts, costs and the charts' usage
// sums read numbers instead of parsing every summary. Almost every call
// that has usage has it for one model; only that case is typed.
//
// Models is how many entries summary.usage has: 0 when it has none (or
// the call has no summary), 1 when the counts below are its one entry's.
// A usage the typed form cannot hold exactly as the readers' JSON rules
// read it (more than one model; a usage or entry that is no object; a
// count that is not a JSON number, or is 2^53 or more) has Models -1, or
// its number of entries when there are more than one: readers then parse
// the summary.
type SummaryUsage struct {
	Models int
	Model  string
	// Counts add both spellings, as the readers do: Prompt is
	// prompt_tokens + input_tokens, Completion completion_tokens +
	// output_tokens. Absent and null counts are 0.
	Requests, Prompt, Completion, Total, CacheRead, CacheCreate float64
}

// Typed reports whether u holds the usage's one entry.
func (u SummaryUsage) Typed() bool { return u.Models == 1 }

// usageKey is the summary's key of the usage object.
var usageKey = []byte(`"usage"`)

// UsageOfSummary derives the typed usage of a summary object.
func UsageOfSummary(summary json.RawMessage) SummaryUsage {
	// Most summaries without usage are skipped without a parse; a key
	// spelled with escapes still parses below.
	if len(summary) == 0 || (!bytes.Contains(summary, usageKey) && !bytes.Contains(summary, []byte(`\u`))) {
		return SummaryUsage{}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(summary, &doc); err != nil {
		return SummaryUsage{Models: -1}
	}
	raw := bytes.TrimSpace(doc["usage"])
	if len(raw) == 0 || string(raw) == "null" {
		return SummaryUsage{}
	}
	if raw[0] != '{' {
		return SummaryUsage{Models: -1}
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return SummaryUsage{Models: -1}
	}
	if len(entries) != 1 {
		return SummaryUsage{Models: len(entries)}
	}
	for model, entry := range entries {
		return usageEntry(model, entry)
	}
	return SummaryUsage{} // unreachable: one entry
}

// usageEntry types one model's counts, or gives Models -1 when one of
// them is not a plain number.
func usageEntry(model string, entry json.RawMessage) SummaryUsage {
	entry = bytes.TrimSpace(entry)
	if len(entry) == 0 || entry[0] != '{' {
		return SummaryUsage{Models: -1}
	}
	var counts map[string]json.RawMessage
	if err := json.Unmarshal(entry, &counts); err != nil {
		return SummaryUsage{Models: -1}
	}
	u := SummaryUsage{Models: 1, Model: model}
	for _, c := range []struct {
		key string
		to  *float64
	}{
		{"requests", &u.Requests},
		{"prompt_tokens", &u.Prompt}, {"input_tokens", &u.Prompt},
		{"completion_tokens", &u.Completion}, {"output_tokens", &u.Completion},
		{"total_tokens", &u.Total},
		{"cache_read_input_tokens", &u.CacheRead}, {"cache_creation_input_tokens", &u.CacheCreate},
	} {
		v, ok := usageCount(counts[c.key])
		if !ok {
			return SummaryUsage{Models: -1}
		}
		*c.to += v
	}
	return u
}

// usageCount reads a count: absent or null is 0, a JSON number its value;
// anything else is not typed.
func usageCount(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil && math.Abs(f) < maxUsageCount
}

// maxUsageCount bounds a count the typed form holds: readers count none
// of 2^53 or more, as pricing reads counts.
const maxUsageCount = 1 << 53
