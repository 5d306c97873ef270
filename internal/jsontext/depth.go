package jsontext

import "bytes"

// MaxValueDepth is how deeply a stored value may nest objects and arrays:
// Python's default recursion limit, beyond which the Weave SDK's
// json.loads fails and no object digest exists. Call inputs, outputs,
// attributes and summaries and object values all stop here.
const MaxValueDepth = 1000

// TooDeep reports whether the JSON document doc nests objects and arrays
// deeper than limit. doc must be valid JSON: brackets inside strings are
// skipped, nothing else is checked.
func TooDeep(doc []byte, limit int) bool {
	// Most values have fewer brackets than the limit in all: nothing to
	// walk.
	if bytes.Count(doc, []byte("{"))+bytes.Count(doc, []byte("[")) <= limit {
		return false
	}
	depth := 0
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		case '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
		}
	}
	return false
}
