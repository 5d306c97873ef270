package refs

import (
	"bytes"
	"encoding/json"
	"slices"
)

var refPrefixes = [][]byte{
	[]byte("weave:///"),
	[]byte("weave-trace-internal:///"),
	[]byte("wandb-artifact:///"),
}

// ExtractRefs returns every string value (object keys excluded) anywhere in
// raw that parses as a ref and prints back to the identical string, in
// first-seen order without repeats. It scans the text without decoding it,
// since it runs on every call write; malformed JSON yields the refs found
// before the fault.
func ExtractRefs(raw json.RawMessage) []string {
	var found []string
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		open := i
		end, escaped := scanString(raw, open+1)
		if end < 0 {
			return found
		}
		content := raw[open+1 : end]
		i = end
		if isKey(raw, end+1) || !mayBeRef(content, escaped) {
			continue
		}
		s := string(content)
		if escaped {
			if json.Unmarshal(raw[open:end+1], &s) != nil {
				continue
			}
		}
		if r, err := Parse(s); err == nil && r.String() == s && !slices.Contains(found, s) {
			found = append(found, s)
		}
	}
	return found
}

// scanString returns the index of the closing quote of the string whose
// content starts at start (-1 when unterminated) and whether it holds
// escapes.
func scanString(raw []byte, start int) (end int, escaped bool) {
	for j := start; j < len(raw); j++ {
		switch raw[j] {
		case '"':
			return j, escaped
		case '\\':
			escaped = true
			j++
		}
	}
	return -1, escaped
}

// isKey reports whether the string ending before pos is an object key: in
// valid JSON only keys are followed by ':'.
func isKey(raw []byte, pos int) bool {
	for ; pos < len(raw); pos++ {
		switch raw[pos] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// mayBeRef is the cheap filter before decoding: escaped strings can spell
// the scheme with escapes, so they always pass.
func mayBeRef(content []byte, escaped bool) bool {
	if escaped {
		return len(content) > 0 && (content[0] == 'w' || content[0] == '\\')
	}
	for _, p := range refPrefixes {
		if bytes.HasPrefix(content, p) {
			return true
		}
	}
	return false
}
