package wire

import (
	"encoding/json"
	"errors"
)

// errNotObject makes DecodeTop fall back to encoding/json, whose errors
// name the problem and its offset.
var errNotObject = errors.New("not a well-formed JSON object")

// splitTop returns the members of a top-level JSON object as sub-slices of
// body, without decoding or copying the values. It is the cheap first
// pass of DecodeTop: each value is then decoded (and fully validated) by
// encoding/json on its own, so a large body is not scanned twice more just
// to find its keys. Anything unexpected yields errNotObject.
func splitTop(body []byte) (map[string][]byte, error) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, errNotObject
	}
	out := map[string][]byte{}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return out, trailing(body, i+1)
	}
	for {
		key, next, err := readKey(body, i)
		if err != nil {
			return nil, err
		}
		i = skipSpace(body, next)
		if i >= len(body) || body[i] != ':' {
			return nil, errNotObject
		}
		start := skipSpace(body, i+1)
		end, err := skipValue(body, start)
		if err != nil {
			return nil, err
		}
		out[key] = body[start:end]
		i = skipSpace(body, end)
		switch {
		case i < len(body) && body[i] == ',':
			i = skipSpace(body, i+1)
		case i < len(body) && body[i] == '}':
			return out, trailing(body, i+1)
		default:
			return nil, errNotObject
		}
	}
}

func trailing(body []byte, i int) error {
	if skipSpace(body, i) != len(body) {
		return errNotObject
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// readKey reads the string at i. Plain ASCII keys are taken as they are;
// keys with escapes or other bytes are decoded by encoding/json so they
// come out exactly as it would decode them.
func readKey(b []byte, i int) (string, int, error) {
	end, escaped, err := skipString(b, i)
	if err != nil {
		return "", 0, err
	}
	if !escaped && isASCII(b[i+1:end-1]) {
		return string(b[i+1 : end-1]), end, nil
	}
	var key string
	if err := json.Unmarshal(b[i:end], &key); err != nil {
		return "", 0, errNotObject
	}
	return key, end, nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// skipString returns the index after the string starting at i.
func skipString(b []byte, i int) (end int, escaped bool, err error) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, errNotObject
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped, nil
		}
	}
	return 0, false, errNotObject
}

// skipValue returns the index after the value starting at i, matching
// brackets and skipping strings; the value's own syntax is checked later
// when it is decoded.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	if b[i] == '"' {
		end, _, err := skipString(b, i)
		return end, err
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, _, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j, nil
			}
			if depth--; depth == 0 {
				return j + 1, nil
			}
		case ',':
			if depth == 0 {
				return j, nil
			}
		}
	}
	if depth == 0 {
		return len(b), nil
	}
	return 0, errNotObject
}
