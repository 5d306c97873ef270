package tracemetricsprocessor

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/weftdev/weft/pricing"
)

// modelUsage is one model's entry of a call's summary.usage.
type modelUsage struct {
	model  []byte // the key, unescaped; points into the summary when it had no escapes
	tokens pricing.Tokens
}

// scanUsage appends the models of summary.usage to dst, reading the
// summary in place: decoding it with encoding/json costs several
// microseconds a call, more than the whole budget of trace metrics. It
// reads what pricing.Usage and pricing.Tokens read (keys matched without
// regard to ASCII case, the last of duplicate keys winning, both
// spellings of prompt and completion tokens added up, anything but a
// number counting 0), so the metrics agree with the costs the API
// reports. The summary is valid JSON: receivers check it. A summary that
// is not is read as far as it goes.
func scanUsage(dst []modelUsage, summary []byte) []modelUsage {
	base := len(dst)
	s := scanner{b: summary}
	if !s.enter() {
		return dst
	}
	for {
		key, escaped, ok := s.key()
		if !ok {
			return dst
		}
		if keyIs(key, escaped, "usage") {
			dst = s.models(dst[:base]) // a later duplicate replaces
		} else {
			s.value()
		}
	}
}

// models appends the models of the usage value at the cursor.
func (s *scanner) models(dst []modelUsage) []modelUsage {
	if !s.enter() {
		s.value() // null, or not an object: no models
		return dst
	}
	for {
		key, escaped, ok := s.key()
		if !ok {
			return dst
		}
		if escaped {
			key = unescape(key)
		}
		for i := range dst {
			if bytes.Equal(dst[i].model, key) { // a later duplicate replaces
				dst = append(dst[:i], dst[i+1:]...)
				break
			}
		}
		if t, ok := s.tokens(); ok {
			dst = append(dst, modelUsage{model: key, tokens: t})
		}
	}
}

// tokens reads one model's usage object at the cursor; false (and the
// value skipped) when it is not an object.
func (s *scanner) tokens() (pricing.Tokens, bool) {
	if !s.enter() {
		s.value()
		return pricing.Tokens{}, false
	}
	var prompt, input, completion, output, requests, total, cacheRead, cacheCreation int64
	for {
		key, escaped, ok := s.key()
		if !ok {
			break
		}
		value := s.value()
		if escaped {
			key = unescape(key)
		}
		var lower [len("cache_creation_input_tokens")]byte
		if len(key) > len(lower) {
			continue
		}
		for i, c := range key {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		var n *int64
		switch string(lower[:len(key)]) {
		case "prompt_tokens":
			n = &prompt
		case "input_tokens":
			n = &input
		case "completion_tokens":
			n = &completion
		case "output_tokens":
			n = &output
		case "requests":
			n = &requests
		case "total_tokens":
			n = &total
		case "cache_read_input_tokens":
			n = &cacheRead
		case "cache_creation_input_tokens":
			n = &cacheCreation
		default:
			continue
		}
		*n = number(value)
	}
	return pricing.Tokens{Requests: requests, Prompt: prompt + input, Completion: completion + output,
		Total: total, CacheRead: cacheRead, CacheCreation: cacheCreation}, true
}

// number reads a count as pricing does: a JSON number below 2^53,
// truncated; anything else is 0.
func number(v []byte) int64 {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0
	}
	if len(v) <= 15 { // a plain count, read without ParseFloat
		n, digits := int64(0), true
		for _, c := range v {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			return n
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.Abs(f) >= 1<<53 {
		return 0
	}
	return int64(f)
}

// keyIs matches a key the way encoding/json matches a struct field:
// without regard to ASCII case.
func keyIs(key []byte, escaped bool, name string) bool {
	if escaped {
		key = unescape(key)
	}
	if len(key) != len(name) {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// unescape decodes a key holding escapes; rare, so it may allocate.
func unescape(raw []byte) []byte {
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	if json.Unmarshal(quoted, &s) != nil {
		return raw
	}
	return []byte(s)
}

// scanner walks JSON text without decoding it.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// enter moves the cursor into the object at it, reporting whether there
// was one.
func (s *scanner) enter() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	return true
}

// key reads the next member's key of the object entered, leaving the
// cursor on its value: the raw key without quotes (escaped tells whether
// it holds escapes). ok is false at the object's end, with the cursor
// past it, or at the first malformed byte, with the cursor at the end of
// the text.
func (s *scanner) key() (key []byte, escaped, ok bool) {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ',' {
		s.i++
		s.ws()
	}
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil, false, false
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.i = len(s.b)
		return nil, false, false
	}
	if key, escaped, ok = s.str(); !ok {
		s.i = len(s.b)
		return nil, false, false
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		s.i = len(s.b)
		return nil, false, false
	}
	s.i++
	s.ws()
	return key, escaped, true
}

// value moves the cursor past the value at it and returns the value's
// text; malformed text moves it to the end.
func (s *scanner) value() []byte {
	start := s.i
	if !s.skip() {
		s.i = len(s.b)
		return nil
	}
	return s.b[start:s.i]
}

// str reads the string at the cursor (on its opening quote).
func (s *scanner) str() (raw []byte, escaped, ok bool) {
	s.i++
	start := s.i
	if j := bytes.IndexByte(s.b[start:], '"'); j >= 0 && bytes.IndexByte(s.b[start:start+j], '\\') < 0 {
		s.i = start + j + 1 // no escapes: the common case, found at memchr speed
		return s.b[start : start+j], false, true
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i += 2
			continue
		case '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, true
		}
		s.i++
	}
	return nil, false, false
}

// skip moves the cursor past the value at it.
func (s *scanner) skip() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // number, true, false, null
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}
