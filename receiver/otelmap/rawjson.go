package otelmap

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/weftdev/weft/internal/jsontext"
)

// isJSONText reports whether s is valid JSON in valid UTF-8, so that it
// can be embedded in a document as is. Text nested deeper than a stored
// value may be (jsontext.MaxValueDepth) stays a string.
func isJSONText(s string) bool { return jsontext.ValidDepth(s, jsontext.MaxValueDepth) }

// rawEntries lists the members of a JSON object in document order.
func rawEntries(raw []byte) ([]entry, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, entry{key: k, v: leaf{raw: v, isRaw: true}})
	}
	return out, true
}

// stepRaw descends into JSON text by object key or array index.
func stepRaw(raw []byte, seg string) val {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return val{}
	}
	switch raw[0] {
	case '{':
		entries, ok := rawEntries(raw)
		if !ok {
			return val{}
		}
		for i := len(entries) - 1; i >= 0; i-- { // a repeated key: last wins
			if entries[i].key == seg {
				return val{kind: valRaw, raw: entries[i].v.raw}
			}
		}
	case '[':
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 {
			return val{}
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || i >= len(items) {
			return val{}
		}
		return val{kind: valRaw, raw: items[i]}
	}
	return val{}
}

// rawPresent: null, "", [] and {} are absent.
func rawPresent[T string | []byte](raw T) bool {
	lo, hi := 0, len(raw)
	for lo < hi && isSpace(raw[lo]) {
		lo++
	}
	for hi > lo && isSpace(raw[hi-1]) {
		hi--
	}
	switch {
	case hi == lo:
		return false
	case raw[lo] == '[' || raw[lo] == '{':
		for i := lo + 1; i < hi-1; i++ {
			if !isSpace(raw[i]) {
				return true
			}
		}
		return false
	case hi-lo == 2 && raw[lo] == '"' && raw[lo+1] == '"':
		return false
	case hi-lo == 4 && string(raw[lo:hi]) == "null":
		return false
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// rawString gives a JSON string's text, or a number or literal as written.
func rawString(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	return string(raw)
}

// parseInt accepts integer text; a quoted JSON number is accepted too.
func parseInt(s string) (int64, bool) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return doubleToInt(f)
	}
	return 0, false
}

func doubleToInt(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}
