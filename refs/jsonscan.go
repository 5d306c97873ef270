package refs

import (
	"bytes"
	"encoding/json"
)

// ObjectMember returns the value of key in the JSON object raw, the last
// one when the key repeats (as Python's json.loads keeps it). It scans
// without decoding, so reading one member of a large value stays cheap.
func ObjectMember(raw json.RawMessage, key string) (json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	var found json.RawMessage
	ok := false
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		keyEnd := skipString(raw, i)
		if keyEnd < 0 {
			return nil, false
		}
		match := keyEquals(raw[i:keyEnd], key)
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		start := skipSpace(raw, i+1)
		end := skipValue(raw, start)
		if end < 0 {
			return nil, false
		}
		if match {
			found, ok = raw[start:end], true
		}
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return found, ok
}

// ArrayElements splits the JSON array raw into its elements (sub-slices of
// raw); ok is false when raw is not an array.
func ArrayElements(raw json.RawMessage) (elems []json.RawMessage, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end := skipValue(raw, i)
		if end < 0 {
			return nil, false
		}
		elems = append(elems, raw[i:end])
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return elems, true
}

func keyEquals(quoted []byte, key string) bool {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == key
	}
	var s string
	return json.Unmarshal(quoted, &s) == nil && s == key
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = skipString(b, j) - 1; j < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for ; j < len(b); j++ {
		switch b[j] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			if j == i {
				return -1
			}
			return j
		}
	}
	if j == i {
		return -1
	}
	return j
}
