package duckdb

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// summaryUsage is a call's summary.usage in the typed form a store keeps
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
type summaryUsage struct {
	Models int
	Model  string
	// Counts add both spellings, as the readers do: Prompt is
	// prompt_tokens + input_tokens, Completion completion_tokens +
	// output_tokens. Absent and null counts are 0.
	Requests, Prompt, Completion, Total, CacheRead, CacheCreate float64
}

// Typed reports whether u holds the usage's one entry.
func (u summaryUsage) Typed() bool { return u.Models == 1 }

// usageKey is the summary's key of the usage object.
var usageKey = []byte(`"usage"`)

// usageOfSummary derives the typed usage of a summary object, which the
// receivers have checked is JSON. It runs for every call written, so the
// usual shapes are scanned in place (scanSummaryUsage); whatever the scan does
// not take is decoded by parseUsage, whose reading is the rule.
func usageOfSummary(summary json.RawMessage) summaryUsage {
	// Most summaries without usage are skipped without a parse; a key
	// spelled with escapes still parses below.
	if len(summary) == 0 || (!bytes.Contains(summary, usageKey) && !bytes.Contains(summary, []byte(`\u`))) {
		return summaryUsage{}
	}
	if u, ok := scanSummaryUsage(summary); ok {
		return u
	}
	return parseUsage(summary)
}

// parseUsage decodes a summary's usage with encoding/json.
func parseUsage(summary json.RawMessage) summaryUsage {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(summary, &doc); err != nil {
		return summaryUsage{Models: -1}
	}
	raw := bytes.TrimSpace(doc["usage"])
	if len(raw) == 0 || string(raw) == "null" {
		return summaryUsage{}
	}
	if raw[0] != '{' {
		return summaryUsage{Models: -1}
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return summaryUsage{Models: -1}
	}
	if len(entries) != 1 {
		return summaryUsage{Models: len(entries)}
	}
	for model, entry := range entries {
		return usageEntry(model, entry)
	}
	return summaryUsage{} // unreachable: one entry
}

// usageEntry types one model's counts, or gives Models -1 when one of
// them is not a plain number.
func usageEntry(model string, entry json.RawMessage) summaryUsage {
	entry = bytes.TrimSpace(entry)
	if len(entry) == 0 || entry[0] != '{' {
		return summaryUsage{Models: -1}
	}
	var counts map[string]json.RawMessage
	if err := json.Unmarshal(entry, &counts); err != nil {
		return summaryUsage{Models: -1}
	}
	u := summaryUsage{Models: 1, Model: model}
	for _, c := range u.countFields() {
		v, ok := usageCount(counts[c.key])
		if !ok {
			return summaryUsage{Models: -1}
		}
		*c.to += v
	}
	return u
}

// countField is a key of a model's usage entry and the count of u it
// adds to.
type countField struct {
	key string
	to  *float64
}

// countFields are the keys the typed form reads, both spellings adding to
// one count, as the readers' SQL (sqlgen's usageKeys) reads them.
func (u *summaryUsage) countFields() [8]countField {
	return [8]countField{
		{"requests", &u.Requests},
		{"prompt_tokens", &u.Prompt}, {"input_tokens", &u.Prompt},
		{"completion_tokens", &u.Completion}, {"output_tokens", &u.Completion},
		{"total_tokens", &u.Total},
		{"cache_read_input_tokens", &u.CacheRead}, {"cache_creation_input_tokens", &u.CacheCreate},
	}
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

// scanSummaryUsage reads the usual shapes of a summary without decoding it: an
// object whose keys have no escapes, with at most one "usage", holding
// no models or one model whose counts are numbers or null. It reports
// false for anything else, which parseUsage then reads.
func scanSummaryUsage(b []byte) (summaryUsage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return summaryUsage{}, false
	}
	var u summaryUsage
	found := false
	err := scanObject(b, i, func(key []byte, v, end int) bool {
		if string(key) != "usage" {
			return true
		}
		if found {
			return false // a repeated key: parseUsage knows which one counts
		}
		found = true
		var ok bool
		u, ok = scanUsageValue(b[v:end])
		return ok
	})
	return u, err
}

// scanUsageValue reads the value of summary.usage: null, or an object of
// no models or of one.
func scanUsageValue(b []byte) (summaryUsage, bool) {
	if string(b) == "null" {
		return summaryUsage{}, true
	}
	if b[0] != '{' {
		return summaryUsage{}, false
	}
	var u summaryUsage
	models := 0
	ok := scanObject(b, 0, func(model []byte, v, end int) bool {
		if models++; models > 1 || b[v] != '{' || !utf8.Valid(model) {
			return false // several models; or no counts; or a name the decoder would mend
		}
		u = summaryUsage{Models: 1, Model: string(model)}
		return scanCounts(b[v:end], &u)
	})
	if !ok || models == 0 {
		return summaryUsage{}, ok
	}
	return u, true
}

// scanCounts reads one model's counts: each known one at most once, a
// JSON number under maxUsageCount or null.
func scanCounts(b []byte, u *summaryUsage) bool {
	fields := u.countFields()
	var seen uint
	return scanObject(b, 0, func(key []byte, v, end int) bool {
		for n, f := range fields {
			if string(key) != f.key {
				continue
			}
			if seen&(1<<n) != 0 {
				return false
			}
			seen |= 1 << n
			c, ok := usageCount(b[v:end])
			*f.to += c
			return ok
		}
		return true
	})
}

// scanObject calls fn with each key (when it has no escapes) and the
// bounds of its value, for the object at b[i] that ends b; fn reporting
// false, a key with escapes, or a malformed object stops it with false.
func scanObject(b []byte, i int, fn func(key []byte, v, end int) bool) bool {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		j, ok := skipString(b, i)
		if !ok || bytes.IndexByte(b[i:j], '\\') >= 0 {
			return false
		}
		key := b[i+1 : j-1]
		if i = skipSpace(b, j); i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		end, ok := skipValue(b, i)
		if !ok || !fn(key, i, end) {
			return false
		}
		switch i = skipSpace(b, end); {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}
